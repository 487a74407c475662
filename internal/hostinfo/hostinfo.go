// Package hostinfo names the machine and the build that a measurement or a training run came from: the
// CPU model and memory of Linux's /proc, and the commit the running binary was built from.
package hostinfo

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// CPUModel returns the processor's model name as /proc/cpuinfo gives it (e.g. "AMD EPYC 9R14"), "" where
// the file or the field is missing.
func CPUModel() string { return procField("/proc/cpuinfo", "model name") }

// MemTotal returns the machine's memory as /proc/meminfo gives it (e.g. "24576000 kB"), "" where unknown.
func MemTotal() string { return procField("/proc/meminfo", "MemTotal") }

// MemTotalBytes returns the machine's memory in bytes (MemTotal of /proc/meminfo) and whether it is known.
func MemTotalBytes() (int64, bool) { return parseKB(MemTotal()) }

// parseKB parses a /proc/meminfo value such as "24576000 kB" into bytes.
func parseKB(s string) (int64, bool) {
	n, unit, _ := strings.Cut(s, " ")
	kb, err := strconv.ParseInt(n, 10, 64)
	if err != nil || kb <= 0 || unit != "kB" || kb > math.MaxInt64>>10 {
		return 0, false
	}
	return kb << 10, true
}

// Commit returns the version-control revision the running binary was built from, with "+dirty" when the
// work tree had uncommitted changes, or "" when the build recorded none (go run, go test, -buildvcs=false).
func Commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return commitOf(info.Settings)
}

// commitOf reads the revision from a build's settings (vcs.revision and vcs.modified).
func commitOf(settings []debug.BuildSetting) string {
	var rev string
	var dirty bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}

// procField returns field key of the /proc file path, "" when the file cannot be read.
func procField(path, key string) string {
	b, _ := os.ReadFile(path) // nil when it cannot be read
	return field(string(b), key)
}

// field returns the value of the first "key : value" line of text whose key is key, trimmed.
func field(text, key string) string {
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
