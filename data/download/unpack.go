package download

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/internal/atomicfile"
)

// countingReader counts the compressed bytes read, for progress.
type countingReader struct {
	r   io.Reader
	bar *progress.Bar
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.bar.Add(int64(n))
	return n, err
}

func openGzip(src string, w io.Writer, label string) (*gzip.Reader, *os.File, *progress.Bar, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	bar := progress.NewBytes(w, label+" "+filepath.Base(src), st.Size())
	zr, err := gzip.NewReader(bufio.NewReaderSize(countingReader{f, bar}, 1<<20))
	if err != nil {
		f.Close()
		return nil, nil, nil, data.BadFile(fmt.Errorf("%s: %w", src, err))
	}
	return zr, f, bar, nil
}

// Gunzip writes the decompressed content of src to dst through a temporary file renamed into place.
func Gunzip(src, dst string, w io.Writer) error {
	zr, f, bar, err := openGzip(src, w, "gunzip")
	if err != nil {
		return err
	}
	defer f.Close()
	tmp, err := atomicfile.CreateTemp(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, zr); err != nil {
		atomicfile.Discard(tmp)
		if isWriteError(err) {
			return fmt.Errorf("%s: %w", dst, err)
		}
		return data.BadFile(fmt.Errorf("%s: %w (truncated or corrupt gzip)", src, err))
	}
	bar.Done()
	return atomicfile.Commit(tmp, dst)
}

// isWriteError reports whether an error of io.Copy came from writing a file (a full disk, say) rather
// than from reading the source.
func isWriteError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "write"
}

// Untar extracts a gzip-compressed tar archive into dir. Only regular files and folders are
// extracted; entries that would land outside dir are an error.
func Untar(src, dir string, w io.Writer) error {
	zr, f, bar, err := openGzip(src, w, "extract")
	if err != nil {
		return err
	}
	defer f.Close()
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return data.BadFile(fmt.Errorf("%s: %w", src, err))
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return data.BadFile(fmt.Errorf("%s: entry %q escapes the target folder", src, h.Name))
		}
		target := filepath.Join(root, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				if isWriteError(err) {
					return fmt.Errorf("%s: %w", target, err)
				}
				return data.BadFile(fmt.Errorf("%s: %s: %w", src, h.Name, err))
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
	}
	bar.Done()
	return nil
}
