// Package filesafe reads and writes files so that a killed process, a second process at work in the same
// folder, or a file that is not what it should be (a symbolic link, a FIFO, a huge file) does no harm.
// It has four parts:
//
//   - Atomic writes: WriteFile, or CreateTemp, Commit and Discard, write a temporary file beside the
//     destination, sync it and rename it into place, so that a reader never sees a half-written file;
//     CommitNew puts it in place only where nothing is. A temporary file of destination DIR/NAME is named
//     DIR/.NAME.tmpDIGITS and is locked for as long as its writer has it open. A writer that was killed
//     leaves its temporary file unlocked: the next writer of the same destination removes such stale
//     files (RemoveStale), and never touches a file of another name or one that a live writer still holds.
//   - Advisory locks: TryLock, TryLockFile (without waiting) and Lock (waiting) take an exclusive flock,
//     which the kernel releases when the process ends, even by SIGKILL; Abandoned tells what a killed
//     writer left. Where the system has no flock, nothing is locked.
//   - Bounded reads: ReadRegular reads a regular file of at most a given size, refusing a symbolic link,
//     a folder, a FIFO or a device without blocking on it; OpenNoFollow opens without following a final
//     symbolic link.
//   - SHA-256 sums files, in the format of `sha256sum`: Sums with Bytes, ParseSums and Verify.
//
// Use:
//
//	if err := filesafe.WriteFile(filepath.Join(dir, "result.json"), b); err != nil { ... }
//	b, err := filesafe.ReadRegular(filepath.Join(dir, "result.json"), 64<<20)
//	sums := filesafe.Sums{"a.bin": filesafe.Sum(a)}
//	err = filesafe.WriteFile(filepath.Join(dir, "a.sha256"), sums.Bytes())
package filesafe
