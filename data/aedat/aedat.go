// Package aedat reads and writes polarity events of the AEDAT 3.1 file format of event cameras
// (the format of the DVS128 Gesture recordings).
//
// Layout. A text header of lines that start with '#' and end with "\r\n": the first is the
// version line "#!AER-DAT3.1", the last "#!END-HEADER". Then a sequence of packets, each a 28-byte
// little-endian header followed by eventCapacity × eventSize bytes of events:
//
//	offset  type   field
//	0       int16  eventType (1 = polarity)
//	2       int16  eventSource
//	4       int32  eventSize, bytes per event (8 for polarity)
//	8       int32  eventTSOffset, byte offset of the timestamp inside an event (4 for polarity)
//	12      int32  eventTSOverflow, the high bits of the timestamps of this packet
//	16      int32  eventCapacity, events stored in the packet
//	20      int32  eventNumber, events in use
//	24      int32  eventValid, valid events
//
// A polarity event is 8 bytes: a uint32 data word — bit 0 the validity mark, bit 1 the polarity
// (1 = ON, brightness increase), bits 2–16 the y address, bits 17–31 the x address — then an int32
// timestamp in microseconds. The full timestamp is eventTSOverflow·2^31 + timestamp. Packets of
// other event types are skipped; events whose validity bit is clear are dropped.
//
// The valid polarity events of a recording must not run backwards in time: each full timestamp is at
// least the one before it (the recorder of the format drops an event whose timestamp runs backwards, so a
// recording it wrote never holds one). A stream whose timestamps decrease is rejected, naming the event.
package aedat

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fits-snn/fits/data"
)

// Event types and sizes.
const (
	PolarityType = 1
	PolaritySize = 8
	headerSize   = 28
	// maxHeader bounds the text header a reader accepts, in bytes.
	maxHeader = 1 << 20
	// maxPacket bounds the bytes of one packet's events.
	maxPacket = 1 << 30
)

// Polarity is one brightness-change event.
type Polarity struct {
	T  int64  // timestamp, µs
	X  uint16 // column, 0..127 on a DVS128
	Y  uint16 // row
	On bool   // polarity: true for a brightness increase
}

// Header is the text header, without the '#' and line ends.
type Header struct {
	Version string   // e.g. "AER-DAT3.1"
	Lines   []string // every header line between the version line and "!END-HEADER"
}

// Read parses a whole AEDAT 3.x stream and returns its valid polarity events in file order, which is
// time order: a stream whose timestamps run backwards is an error.
func Read(r io.Reader) (*Header, []Polarity, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	h, err := readHeader(br)
	if err != nil {
		return nil, nil, err
	}
	var evs []Polarity
	var ph [headerSize]byte
	var body bytes.Buffer
	for pkt := 0; ; pkt++ {
		n, err := io.ReadFull(br, ph[:])
		if err == io.EOF {
			return h, evs, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("packet %d: truncated header (%d of %d bytes)", pkt, n, headerSize)
		}
		le := binary.LittleEndian
		typ := int16(le.Uint16(ph[0:]))
		size := int32(le.Uint32(ph[4:]))
		tsOff := int32(le.Uint32(ph[8:]))
		overflow := int32(le.Uint32(ph[12:]))
		capacity := int32(le.Uint32(ph[16:]))
		number := int32(le.Uint32(ph[20:]))
		valid := int32(le.Uint32(ph[24:]))
		if size <= 0 || overflow < 0 || capacity < 0 || number < 0 || valid < 0 || number > capacity || valid > number {
			return nil, nil, fmt.Errorf("packet %d: bad header (type %d, eventSize %d, capacity %d, number %d, valid %d)", pkt, typ, size, capacity, number, valid)
		}
		total := int64(size) * int64(capacity)
		if total > maxPacket {
			return nil, nil, fmt.Errorf("packet %d: %d bytes of events exceeds %d", pkt, total, maxPacket)
		}
		if typ != PolarityType {
			if _, err := io.CopyN(io.Discard, br, total); err != nil {
				return nil, nil, fmt.Errorf("packet %d (type %d): truncated: %d bytes of events expected", pkt, typ, total)
			}
			continue
		}
		if size != PolaritySize || tsOff != 4 {
			return nil, nil, fmt.Errorf("packet %d: polarity events of %d bytes with the timestamp at %d, want 8 and 4", pkt, size, tsOff)
		}
		// The buffer grows as the bytes arrive, so a lying header cannot force a large allocation.
		body.Reset()
		if m, err := io.CopyN(&body, br, total); err != nil {
			return nil, nil, fmt.Errorf("packet %d: truncated: %d bytes of polarity events expected, %d present", pkt, total, m)
		}
		for i := 0; i < int(number); i++ {
			e := body.Bytes()[i*PolaritySize:]
			d := le.Uint32(e)
			if d&1 == 0 {
				continue
			}
			ev := Polarity{
				T:  int64(overflow)<<31 | int64(uint32(le.Uint32(e[4:]))&0x7fffffff),
				X:  uint16(d >> 17 & 0x7fff),
				Y:  uint16(d >> 2 & 0x7fff),
				On: d>>1&1 == 1,
			}
			if n := len(evs); n > 0 && ev.T < evs[n-1].T {
				return nil, nil, fmt.Errorf("packet %d, event %d: timestamp %d µs runs backwards (the event before it is at %d µs): the events of a recording must be in time order",
					pkt, i, ev.T, evs[n-1].T)
			}
			evs = append(evs, ev)
		}
	}
}

func readHeader(br *bufio.Reader) (*Header, error) {
	h := &Header{}
	read := 0
	for line := 0; ; line++ {
		b, err := br.Peek(1)
		if err != nil || b[0] != '#' {
			if line == 0 {
				return nil, errors.New("not an AEDAT file: no '#!AER-DAT' version line")
			}
			return nil, errors.New("header ends without '#!END-HEADER'")
		}
		s, err := br.ReadString('\n')
		read += len(s)
		if err != nil {
			return nil, errors.New("truncated header")
		}
		if read > maxHeader {
			return nil, fmt.Errorf("header longer than %d bytes", maxHeader)
		}
		s = strings.TrimRight(s[1:], "\r\n")
		if line == 0 {
			if !strings.HasPrefix(s, "!AER-DAT3") {
				return nil, fmt.Errorf("unsupported AEDAT version line %q (want #!AER-DAT3.x)", "#"+s)
			}
			h.Version = s[1:]
			continue
		}
		if s == "!END-HEADER" {
			return h, nil
		}
		h.Lines = append(h.Lines, s)
	}
}

// ReadFile reads an AEDAT file; errors name the file and are data.FileErrors.
func ReadFile(path string) (_ *Header, _ []Polarity, err error) {
	defer func() { err = data.BadFile(err) }()
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, nil, err
	} else if st.IsDir() {
		return nil, nil, fmt.Errorf("%s: is a directory, not an AEDAT file", path)
	} else if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", path)
	}
	h, evs, err := Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, evs, nil
}

// Write writes an AEDAT 3.1 stream: the version line, the given header lines, the end line, then
// the events in polarity packets of at most perPacket events (all marked valid). Timestamps must be
// non-negative; each packet carries the overflow of its first event, so a packet never spans an
// overflow boundary.
func Write(w io.Writer, lines []string, evs []Polarity, perPacket int) error {
	if perPacket <= 0 {
		return errors.New("perPacket must be positive")
	}
	var b bytes.Buffer
	b.WriteString("#!AER-DAT3.1\r\n")
	for _, l := range lines {
		if strings.ContainsAny(l, "\r\n") {
			return fmt.Errorf("header line %q holds a line break", l)
		}
		b.WriteString("#" + l + "\r\n")
	}
	b.WriteString("#!END-HEADER\r\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	le := binary.LittleEndian
	for start := 0; start < len(evs); {
		if evs[start].T < 0 {
			return fmt.Errorf("event %d: negative timestamp %d", start, evs[start].T)
		}
		ov := evs[start].T >> 31
		end := start
		for end < len(evs) && end-start < perPacket && evs[end].T >= 0 && evs[end].T>>31 == ov {
			if evs[end].X > 0x7fff || evs[end].Y > 0x7fff {
				return fmt.Errorf("event %d: address (%d, %d) exceeds 15 bits", end, evs[end].X, evs[end].Y)
			}
			end++
		}
		n := end - start
		pkt := make([]byte, headerSize+n*PolaritySize)
		le.PutUint16(pkt[0:], PolarityType)
		le.PutUint16(pkt[2:], 1)
		le.PutUint32(pkt[4:], PolaritySize)
		le.PutUint32(pkt[8:], 4)
		le.PutUint32(pkt[12:], uint32(ov))
		le.PutUint32(pkt[16:], uint32(n))
		le.PutUint32(pkt[20:], uint32(n))
		le.PutUint32(pkt[24:], uint32(n))
		for i, e := range evs[start:end] {
			d := uint32(e.X)<<17 | uint32(e.Y)<<2 | 1
			if e.On {
				d |= 2
			}
			o := headerSize + i*PolaritySize
			le.PutUint32(pkt[o:], d)
			le.PutUint32(pkt[o+4:], uint32(e.T&0x7fffffff))
		}
		if _, err := w.Write(pkt); err != nil {
			return err
		}
		start = end
	}
	return nil
}
