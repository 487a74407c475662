package gsc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/internal/filesafe"
)

// SampleRate is the sampling rate of Speech Commands clips, in Hz.
const SampleRate = 16000

// MaxWAVBytes caps the size of a WAV file that ReadWAV reads (64 MiB: about 35 minutes of 16 kHz mono
// 16-bit audio; a Speech Commands clip is 32 KB).
const MaxWAVBytes = 64 << 20

// ReadWAV reads a mono 16-bit PCM WAV file sampled at rate Hz and returns its samples scaled to
// [-1, 1) (divided by 32768). Any other rate, channel count, bit depth or encoding is an error
// naming the file (a data.FileError).
func ReadWAV(path string, rate int) ([]float64, error) {
	w, err := openWAVAt(path, rate)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	x := make([]float64, w.Len())
	if err := w.Read(x, 0); err != nil {
		return nil, err
	}
	return x, nil
}

// openWAV opens a WAV file for reading and returns its size: a regular file (a folder, a FIFO or a device
// is refused without blocking) of at most MaxWAVBytes. Errors are data.FileErrors naming the file.
func openWAV(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, data.BadFile(err)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		err = data.BadFile(err)
	case st.IsDir():
		err = data.BadFile(fmt.Errorf("%s: is a directory, not a WAV file", path))
	case !st.Mode().IsRegular():
		err = data.BadFile(fmt.Errorf("%s: not a regular file", path))
	case st.Size() > MaxWAVBytes:
		err = data.BadFile(fmt.Errorf("%s: %d bytes, more than the %d MiB a WAV file may hold here (%.0f minutes at 16 kHz)",
			path, st.Size(), MaxWAVBytes>>20, float64(MaxWAVBytes)/2/SampleRate/60))
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// wavFile is a WAV file opened for reading its samples where they lie, a few at a time.
type wavFile struct {
	f      *os.File
	path   string
	layout wavLayout
	buf    []byte
}

// openWAVAt opens a mono 16-bit PCM WAV file sampled at rate Hz and checks its header (checkRIFF), without
// reading its samples. Errors are data.FileErrors naming the file.
func openWAVAt(path string, rate int) (*wavFile, error) {
	f, size, err := openWAV(path)
	if err != nil {
		return nil, err
	}
	h, err := checkRIFF(f, size)
	if err == nil && h.rate != rate {
		err = fmt.Errorf("sample rate %d Hz, want %d Hz", h.rate, rate)
	}
	if err != nil {
		f.Close()
		return nil, data.BadFile(fmt.Errorf("%s: %w", path, err))
	}
	return &wavFile{f: f, path: path, layout: h}, nil
}

// Len returns the number of samples.
func (w *wavFile) Len() int { return w.layout.dataSize / 2 }

// Read writes samples start .. start+len(dst)-1 into dst, scaled as ReadWAV scales them.
func (w *wavFile) Read(dst []float64, start int) error {
	if cap(w.buf) < 2*len(dst) {
		w.buf = make([]byte, 2*len(dst))
	}
	b := w.buf[:2*len(dst)]
	if _, err := w.f.ReadAt(b, int64(w.layout.data)+2*int64(start)); err != nil {
		return data.BadFile(fmt.Errorf("%s: %w", w.path, err))
	}
	for i := range dst {
		dst[i] = float64(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
	}
	return nil
}

// Close closes the file.
func (w *wavFile) Close() error { return w.f.Close() }

// DecodeWAV decodes WAV bytes as ReadWAV does.
func DecodeWAV(b []byte, rate int) ([]float64, error) {
	x, got, err := DecodeWAVRate(b)
	if err != nil {
		return nil, err
	}
	if got != rate {
		return nil, fmt.Errorf("sample rate %d Hz, want %d Hz", got, rate)
	}
	return x, nil
}

// DecodeWAVRate decodes mono 16-bit PCM WAV bytes at any rate and returns the samples in [-1, 1)
// and the rate in Hz. The samples are read straight from the data chunk (checkRIFF vouches for every
// header field first), so decoding holds nothing but b and the result.
func DecodeWAVRate(b []byte) (x []float64, rate int, err error) {
	h, err := checkRIFF(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, 0, err
	}
	pcm := b[h.data : h.data+h.dataSize]
	x = make([]float64, len(pcm)/2)
	for i := range x {
		x[i] = float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) / 32768
	}
	return x, h.rate, nil
}

// wavLayout is what checkRIFF found in a WAV file: the sample rate and where the data chunk's samples lie.
type wavLayout struct {
	rate           int
	data, dataSize int // offset and size in bytes of the data chunk's payload
}

// checkRIFF walks every RIFF chunk: "RIFF", size, "WAVE", then chunks of a 4-byte id, a little-endian
// uint32 size and the payload padded to an even length. A "fmt " chunk of at least 16 bytes describing
// mono 16-bit PCM at a nonzero rate must precede the "data" chunk, whose size must be a whole number of
// samples, and no chunk may run past the end of the file (for "data" that is reported as truncation).
// Each fault has its own message: an encoding, channel count, rate, bit depth or block align that is
// not mono 16-bit PCM is named as such. It reads the chunk headers and the fmt chunk of the size bytes
// that r holds, no samples.
func checkRIFF(r io.ReaderAt, size int64) (wavLayout, error) {
	var h wavLayout
	var head [16]byte
	read := func(n int, at int64) ([]byte, error) {
		if _, err := r.ReadAt(head[:n], at); err != nil {
			return nil, err
		}
		return head[:n], nil
	}
	if size < 12 {
		return h, fmt.Errorf("not a valid WAV file (no RIFF/WAVE header)")
	}
	if b, err := read(12, 0); err != nil {
		return h, err
	} else if string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return h, fmt.Errorf("not a valid WAV file (no RIFF/WAVE header)")
	}
	fmtSeen, dataSeen := false, false
	for pos := int64(12); pos+8 <= size; {
		b, err := read(8, pos)
		if err != nil {
			return h, err
		}
		id := string(b[:4])
		n := int64(binary.LittleEndian.Uint32(b[4:]))
		end := pos + 8 + n
		switch {
		case id == "data" && !fmtSeen:
			return h, fmt.Errorf("not a valid WAV file (data chunk before the fmt chunk)")
		case id == "data" && end > size:
			return h, fmt.Errorf("truncated: data chunk declares %d bytes, %d present", n, size-pos-8)
		case end > size:
			return h, fmt.Errorf("malformed WAV: chunk %q of %d bytes runs past the end of the file", id, n)
		case id == "fmt " && n < 16:
			return h, fmt.Errorf("malformed WAV: fmt chunk of %d bytes, want at least 16", n)
		case id == "fmt " && !fmtSeen:
			fmtSeen = true
			f, err := read(16, pos+8)
			if err != nil {
				return h, err
			}
			if h.rate, err = checkFormat(f); err != nil {
				return h, err
			}
		case id == "data" && !dataSeen:
			if n%2 != 0 {
				return h, fmt.Errorf("malformed WAV: data chunk of %d bytes is not a whole number of 16-bit samples", n)
			}
			dataSeen, h.data, h.dataSize = true, int(pos+8), int(n)
		}
		pos = end + n&1
	}
	if !dataSeen {
		return h, fmt.Errorf("not a valid WAV file (no data chunk)")
	}
	return h, nil
}

// checkFormat checks the first 16 bytes of a fmt chunk (encoding, channels, rate, byte rate, block
// align, bits per sample) for mono 16-bit PCM and returns the rate in Hz.
func checkFormat(f []byte) (int, error) {
	le := binary.LittleEndian
	encoding, channels, rate := le.Uint16(f), le.Uint16(f[2:]), le.Uint32(f[4:])
	align, bits := le.Uint16(f[12:]), le.Uint16(f[14:])
	switch {
	case encoding != 1:
		return 0, fmt.Errorf("WAV encoding %d, want 1 (PCM)", encoding)
	case channels == 0:
		return 0, fmt.Errorf("0 channels, want mono")
	case channels != 1:
		return 0, fmt.Errorf("%d channels, want mono", channels)
	case rate == 0:
		return 0, fmt.Errorf("sample rate 0 Hz")
	case bits != 16:
		return 0, fmt.Errorf("%d-bit samples, want 16-bit", bits)
	case align != 2:
		return 0, fmt.Errorf("block align %d bytes, want 2 (one 16-bit mono sample)", align)
	}
	return int(rate), nil
}

// WriteWAV writes samples in [-1, 1] as a mono 16-bit PCM WAV file at rate Hz (the 44-byte header of a
// fmt and a data chunk, then the samples), through a temporary file renamed into place (filesafe).
// Samples are clipped to the 16-bit range.
func WriteWAV(path string, x []float64, rate int) error {
	le := binary.LittleEndian
	b := make([]byte, 44+2*len(x))
	copy(b, "RIFF")
	le.PutUint32(b[4:], uint32(36+2*len(x)))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)             // fmt chunk size
	le.PutUint16(b[20:], 1)              // PCM
	le.PutUint16(b[22:], 1)              // mono
	le.PutUint32(b[24:], uint32(rate))   // samples per second
	le.PutUint32(b[28:], uint32(2*rate)) // bytes per second
	le.PutUint16(b[32:], 2)              // block align
	le.PutUint16(b[34:], 16)             // bits per sample
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(2*len(x)))
	for i, v := range x {
		le.PutUint16(b[44+2*i:], uint16(int16(max(-32768, min(32767, int(v*32767))))))
	}
	return filesafe.WriteFile(path, b)
}
