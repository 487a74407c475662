package filesafe_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fits-snn/fits/internal/filesafe"
)

// Example saves a file with its sums file, then reads both back as a later process would: bounded,
// refusing what is not a regular file, and checked against the sums.
func Example() {
	dir, err := os.MkdirTemp("", "filesafe-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	weights := []byte("the weights")
	sums := filesafe.Sums{"w.bin": filesafe.Sum(weights)}
	for name, content := range map[string][]byte{"w.bin": weights, "w.sha256": sums.Bytes()} {
		if err := filesafe.WriteFile(filepath.Join(dir, name), content); err != nil {
			fmt.Println(err)
			return
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "w.sha256"))
	fmt.Printf("%.12s…%s", b, b[64:])

	// Later: read back, at most 1 MiB each, and verify.
	b, err = filesafe.ReadRegular(filepath.Join(dir, "w.sha256"), 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	read, err := filesafe.ParseSums(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := filesafe.ReadRegular(filepath.Join(dir, "w.bin"), 1<<20)
	fmt.Println("verify:", read.Verify(map[string][]byte{"w.bin": w}))
	fmt.Println("verify changed:", read.Verify(map[string][]byte{"w.bin": []byte("other weights")}))

	// What is not a regular file is refused, never read.
	_, err = filesafe.ReadRegular(dir, 1<<20)
	var nr *filesafe.NotRegularError
	fmt.Println("folder refused:", errors.As(err, &nr))
	_, err = filesafe.ReadRegular(filepath.Join(dir, "w.bin"), 4)
	fmt.Println("too large refused:", errors.As(err, &nr), nr.Size, nr.Limit)
	// Output:
	// f38329d23116…  w.bin
	// verify: <nil>
	// verify changed: w.bin does not match the SHA-256 recorded when it was saved
	// folder refused: true
	// too large refused: true 11 4
}
