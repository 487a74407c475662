package main

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// mallocHugePages is the glibc tunable that makes malloc advise the kernel to back its large allocations
// with transparent huge pages (glibc ≥ 2.35; older versions ignore it). XLA's CPU runtime allocates every
// intermediate tensor of a training step afresh (tens of MB at W = 512), and with 4 KiB pages each of
// them costs one page fault per page; with huge pages it costs one per 2 MiB (measured:
// docs/performance.md, docs/performance-notes.md).
const mallocHugePages = "glibc.malloc.hugetlb=1"

// execWithHugePageMalloc re-executes the running binary, same arguments and process id, with
// mallocHugePages added to GLIBC_TUNABLES, which glibc reads only at process start. It does nothing when
// the tunable is already set (by the user or a previous re-execution), when FITS_MALLOC_HUGEPAGES=0, or
// off Linux; if the re-execution fails the command runs as it is.
func execWithHugePageMalloc() {
	if runtime.GOOS != "linux" || os.Getenv("FITS_MALLOC_HUGEPAGES") == "0" {
		return
	}
	cur := os.Getenv("GLIBC_TUNABLES")
	if strings.Contains(cur, "glibc.malloc.hugetlb") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	value := mallocHugePages
	if cur != "" {
		value = cur + ":" + mallocHugePages
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GLIBC_TUNABLES=") })
	_ = syscall.Exec(exe, os.Args, append([]string{"GLIBC_TUNABLES=" + value}, env...)) // returns only on failure
}
