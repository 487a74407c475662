package download

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data/progress"
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
		return nil, nil, nil, fmt.Errorf("%s: %w", src, err)
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
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, zr); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w (truncated or corrupt gzip)", src, err)
	}
	bar.Done()
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), dst)
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
			return fmt.Errorf("%s: %w", src, err)
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s: entry %q escapes the target folder", src, h.Name)
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
				return fmt.Errorf("%s: %s: %w", src, h.Name, err)
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
	}
	bar.Done()
	return nil
}
