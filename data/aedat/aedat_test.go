package aedat

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// packet builds a packet by hand: header fields then raw event words.
func packet(typ int16, size, tsOff, overflow, capacity, number, valid int32, events ...uint32) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&b, le, typ)
	binary.Write(&b, le, int16(1))
	for _, v := range []int32{size, tsOff, overflow, capacity, number, valid} {
		binary.Write(&b, le, v)
	}
	binary.Write(&b, le, events)
	return b.Bytes()
}

const hdr = "#!AER-DAT3.1\r\n#Format: RAW\r\n#Source 1: DVS128\r\n#!END-HEADER\r\n"

func TestBitLayout(t *testing.T) {
	// x=127, y=5, ON, valid: data = 127<<17 | 5<<2 | 1<<1 | 1; timestamp 1000 µs, overflow 1.
	d1 := uint32(127<<17 | 5<<2 | 2 | 1)
	d2 := uint32(3<<17 | 100<<2 | 1) // x=3, y=100, OFF
	d3 := uint32(9<<17 | 9<<2 | 2)   // validity bit clear: dropped
	in := hdr + string(packet(1, 8, 4, 1, 3, 3, 2, d1, 1000, d2, 2000, d3, 3000)) +
		string(packet(0, 8, 4, 0, 1, 1, 1, 0, 5)) + // a special-event packet, skipped
		string(packet(1, 8, 4, 1, 2, 1, 1, d2, 5000, 0, 0)) // capacity 2, number 1
	h, evs, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != "AER-DAT3.1" || len(h.Lines) != 2 || h.Lines[1] != "Source 1: DVS128" {
		t.Errorf("header %+v", h)
	}
	want := []Polarity{
		{T: 1<<31 + 1000, X: 127, Y: 5, On: true},
		{T: 1<<31 + 2000, X: 3, Y: 100, On: false},
		{T: 1<<31 + 5000, X: 3, Y: 100, On: false},
	}
	if len(evs) != len(want) {
		t.Fatalf("events %+v", evs)
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, evs[i], want[i])
		}
	}
}

func TestRoundTrip(t *testing.T) {
	evs := []Polarity{{T: 0, X: 0, Y: 0, On: true}, {T: 5, X: 127, Y: 127}, {T: 1<<31 - 1, X: 64, Y: 1, On: true}, {T: 1 << 31, X: 2, Y: 3}, {T: 3 << 31, X: 4, Y: 5, On: true}}
	var b bytes.Buffer
	if err := Write(&b, []string{"Source 1: DVS128"}, evs, 2); err != nil {
		t.Fatal(err)
	}
	_, got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(evs) {
		t.Fatalf("%d events back", len(got))
	}
	for i := range evs {
		if got[i] != evs[i] {
			t.Errorf("event %d: %+v, want %+v", i, got[i], evs[i])
		}
	}
	if err := Write(&b, nil, []Polarity{{T: -1}}, 1); err == nil {
		t.Error("negative timestamp written")
	}
}

func TestErrors(t *testing.T) {
	ok := packet(1, 8, 4, 0, 1, 1, 1, 3, 10)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"no header", "hello", "not an AEDAT file"},
		{"version", "#!AER-DAT2.0\r\n#!END-HEADER\r\n", "unsupported AEDAT version"},
		{"no end", "#!AER-DAT3.1\r\n#x\r\n", "without '#!END-HEADER'"},
		{"cut line", "#!AER-DAT3.1\r\n#x", "truncated header"},
		{"no end 2", "#!AER-DAT3.1\r\nxyz", "without '#!END-HEADER'"},
		{"short packet header", hdr + string(ok[:20]), "packet 0: truncated header (20 of 28 bytes)"},
		{"short events", hdr + string(ok[:32]), "packet 0: truncated: 8 bytes of polarity events expected, 4 present"},
		{"bad counts", hdr + string(packet(1, 8, 4, 0, 1, 2, 1, 3, 10)), "bad header"},
		{"event size", hdr + string(packet(1, 16, 4, 0, 1, 1, 1, 3, 10, 0, 0)), "polarity events of 16 bytes"},
		{"huge", hdr + string(packet(1, 8, 4, 0, 1<<30, 1, 1)), "exceeds"},
		{"short other packet", hdr + string(packet(2, 8, 4, 0, 4, 1, 1, 1)), "packet 0 (type 2): truncated"},
		{"backwards in a packet", hdr + string(packet(1, 8, 4, 0, 3, 3, 3, 3, 10, 3, 20, 3, 19)), "packet 0, event 2: timestamp 19 µs runs backwards (the event before it is at 20 µs)"},
		{"backwards across packets", hdr + string(ok) + string(packet(1, 8, 4, 0, 1, 1, 1, 3, 9)), "packet 1, event 0: timestamp 9 µs runs backwards"},
		{"overflow backwards", hdr + string(packet(1, 8, 4, 1, 1, 1, 1, 3, 0)) + string(ok), "packet 1, event 0: timestamp 10 µs runs backwards (the event before it is at 2147483648 µs)"},
	} {
		_, _, err := Read(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestTimeOrder: equal timestamps and an invalid (dropped) event that runs backwards are accepted; the
// valid events come back in time order.
func TestTimeOrder(t *testing.T) {
	in := hdr + string(packet(1, 8, 4, 0, 3, 3, 2, 3, 10, 2, 5, 3, 10)) + string(packet(1, 8, 4, 0, 1, 1, 1, 3, 11))
	_, evs, err := Read(strings.NewReader(in))
	if err != nil || len(evs) != 3 || evs[0].T != 10 || evs[1].T != 10 || evs[2].T != 11 {
		t.Fatalf("events %+v, %v", evs, err)
	}
}

// FuzzRead checks that no input makes the reader panic and that what it accepts writes back.
func FuzzRead(f *testing.F) {
	f.Add([]byte(hdr + string(packet(1, 8, 4, 0, 1, 1, 1, 3, 10))))
	f.Add([]byte(hdr + string(packet(1, 8, 4, 2, 2, 2, 2, 7, 10, 1<<17|1, 20))))
	f.Add([]byte(hdr + string(packet(0, 8, 4, 0, 1, 1, 1, 0, 0))))
	f.Add([]byte(hdr))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, evs, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := Write(&b, nil, evs, 64); err != nil {
			t.Fatalf("accepted events do not write back: %v", err)
		}
		_, back, err := Read(&b)
		if err != nil || len(back) != len(evs) {
			t.Fatalf("round trip: %v, %d of %d events", err, len(back), len(evs))
		}
	})
}
