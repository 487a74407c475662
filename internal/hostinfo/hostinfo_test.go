package hostinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestField(t *testing.T) {
	cpuinfo := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu avx512f\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 9R14\n"
	meminfo := "MemTotal:       24576000 kB\nMemFree:        1000 kB\n"
	for _, c := range []struct{ text, key, want string }{
		{cpuinfo, "model name", "AMD EPYC 9R14"},
		{cpuinfo, "vendor_id", "AuthenticAMD"},
		{cpuinfo, "model", ""}, // a prefix of a key is not the key
		{meminfo, "MemTotal", "24576000 kB"},
		{"", "model name", ""},
	} {
		if got := field(c.text, c.key); got != c.want {
			t.Errorf("field(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestCommitOf(t *testing.T) {
	rev := "c7231b8aa50f3b1f0e9d7c5b6a4e3d2c1b0a9f8e"
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, rev},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}, rev + "+dirty"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
		{nil, ""},
	} {
		if got := commitOf(c.settings); got != c.want {
			t.Errorf("commitOf(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}

func TestCPUModelOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "386") {
		t.Skip("/proc/cpuinfo names the model on x86 Linux")
	}
	if CPUModel() == "" {
		t.Error("CPUModel() is empty on x86 Linux")
	}
	if MemTotal() == "" {
		t.Error("MemTotal() is empty on Linux")
	}
}

func TestParseKB(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"24576000 kB", 24576000 << 10, true},
		{"1 kB", 1024, true},
		{"", 0, false},
		{"24576000", 0, false},
		{"-5 kB", 0, false},
		{"abc kB", 0, false},
		{"9223372036854775807 kB", 0, false},
	} {
		if got, ok := parseKB(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("parseKB(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
