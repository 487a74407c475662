// Command synthdata writes the splits of one of the toolkit's registered datasets (the embedded synthetic
// task by default) as NumPy .npy files, for the PyTorch peer that trains the released-layout fixtures
// (peers/released_fixture.py): NAME_x.npy float32 [examples, time, features] and NAME_y.npy int64
// [examples] for NAME = train, test (and val when the dataset has one), with the examples in the order the
// toolkit holds them.
//
// Usage: go run ./peers/synthdata --out=DIR [--dataset=synthetic] [--small]
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data"
	_ "github.com/fits-snn/fits/data/all"
)

func main() {
	out := flag.String("out", "", "folder to write the .npy files into (created if missing)")
	name := flag.String("dataset", "synthetic", "registered dataset")
	small := flag.Bool("small", false, "the dataset's reduced version")
	flag.Parse()
	if err := run(*out, *name, *small); err != nil {
		fmt.Fprintln(os.Stderr, "synthdata:", err)
		os.Exit(2)
	}
}

func run(out, name string, small bool) error {
	if out == "" {
		return fmt.Errorf("--out is required")
	}
	ds, err := data.Load(name, data.Options{Small: small})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, sp := range []struct {
		name string
		set  *data.Set
	}{{"train", ds.Train}, {"val", ds.Val}, {"test", ds.Test}} {
		if sp.set == nil || sp.set.N == 0 {
			continue
		}
		s := sp.set
		idx := make([]int, s.N)
		for i := range idx {
			idx[i] = i
		}
		x := make([]float32, s.N*s.T*s.F)
		s.ExamplesInto(idx, x)
		bits := make([]uint64, len(x))
		for i, v := range x {
			bits[i] = uint64(math.Float32bits(v))
		}
		if err := writeNpy(filepath.Join(out, sp.name+"_x.npy"), "<f4", []int{s.N, s.T, s.F}, 4, bits); err != nil {
			return err
		}
		labels := make([]uint64, s.N)
		for i, l := range s.Labels {
			labels[i] = uint64(int64(l))
		}
		if err := writeNpy(filepath.Join(out, sp.name+"_y.npy"), "<i8", []int{s.N}, 8, labels); err != nil {
			return err
		}
	}
	return nil
}

// writeNpy writes a little-endian .npy file (format 1.0) of the given dtype, shape and element size.
func writeNpy(file, descr string, shape []int, size int, values []uint64) error {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString("\x93NUMPY\x01\x00")
	binary.Write(w, binary.LittleEndian, uint16(len(header)))
	w.WriteString(header)
	buf := make([]byte, 8)
	for _, v := range values {
		binary.LittleEndian.PutUint64(buf, v)
		w.Write(buf[:size])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
