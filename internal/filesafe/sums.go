package filesafe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// Sums is a SHA-256 sums file: the hex SHA-256 of each file, by name. Its format (Bytes, ParseSums) is
// the one `sha256sum` writes and `sha256sum -c` checks: a line "HEX  NAME" a file.
type Sums map[string]string

// Sum returns the hex SHA-256 of data.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// SumFile returns the hex SHA-256 of the file at path.
func SumFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Bytes returns the sums file: a line "HEX  NAME" a file, sorted by name.
func (s Sums) Bytes() []byte {
	var b bytes.Buffer
	for _, n := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprintf(&b, "%s  %s\n", s[n], n)
	}
	return b.Bytes()
}

// ParseSums parses a sums file: lines "HEX  NAME" (or "HEX *NAME", as `sha256sum --binary` writes),
// HEX being 64 hexadecimal digits; blank lines are skipped and a line may end in "\r". It returns the
// sums of every well-formed line, and an error when a line is not one (a caller that tolerates a file
// of someone else's may keep the sums and drop the error).
func ParseSums(b []byte) (Sums, error) {
	s := Sums{}
	var bad error
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		sum, rest, ok := strings.Cut(line, " ")
		if _, err := hex.DecodeString(sum); ok && len(sum) == 2*sha256.Size && err == nil && len(rest) > 1 && (rest[0] == ' ' || rest[0] == '*') {
			s[rest[1:]] = sum
		} else if bad == nil {
			bad = fmt.Errorf("line %d is not \"SHA-256  name\"", i+1)
		}
	}
	return s, bad
}

// Verify checks files (name -> content; nil content: the file is missing) against s, which must list
// exactly those files, each with the SHA-256 of its content.
func (s Sums) Verify(files map[string][]byte) error {
	for file, content := range files {
		want, ok := s[file]
		switch {
		case !ok:
			return fmt.Errorf("its checksum file does not list %s", file)
		case content == nil:
			return fmt.Errorf("%s is missing", file)
		case Sum(content) != want:
			return fmt.Errorf("%s does not match the SHA-256 recorded when it was saved", file)
		}
	}
	if len(s) != len(files) {
		return fmt.Errorf("its checksum file lists %d files, want %d", len(s), len(files))
	}
	return nil
}
