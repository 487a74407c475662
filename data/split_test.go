package data

import (
	"slices"
	"testing"
)

func TestOfficialValSplitSHD(t *testing.T) {
	val, train, err := OfficialValSplit(8156, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(val) != 1631 || len(train) != 8156-1631 {
		t.Fatalf("%d validation and %d training examples, want 1631 and 6525", len(val), len(train))
	}
	// numpy.random.RandomState(0).permutation(8156)[:5] and [-3:] (numpy 2.4.6).
	if want := []int{1529, 6337, 1168, 6225, 1388}; !slices.Equal(val[:5], want) {
		t.Errorf("first validation indices %v, numpy gives %v", val[:5], want)
	}
	all := append(slices.Clone(val), train...)
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("validation and training indices are not a partition of 0..8155")
		}
	}
}

func TestOfficialValCount(t *testing.T) {
	for n, want := range map[int]int{2: 1, 4: 1, 5: 1, 9: 1, 10: 2, 8156: 1631, 75466: 15093} {
		if got := OfficialValCount(n); got != want {
			t.Errorf("OfficialValCount(%d) = %d, want %d", n, got, want)
		}
	}
	if _, _, err := OfficialValSplit(1, 0); err == nil {
		t.Error("a split of one example: no error")
	}
	if _, _, err := OfficialValSplit(10, -1); err == nil {
		t.Error("seed -1: no error")
	}
}

func TestOfficialSplitOff(t *testing.T) {
	x := make([]float32, 10)
	for i := range x {
		x[i] = float32(i)
	}
	s := NewSet(x, make([]int32, 10), 1, 1)
	tr, va, err := s.OfficialSplitOff(0)
	if err != nil {
		t.Fatal(err)
	}
	// RandomState(0).permutation(10) = [2 8 4 9 1 6 7 3 0 5].
	if !slices.Equal(va.Dense(), []float32{2, 8}) || !slices.Equal(tr.Dense(), []float32{4, 9, 1, 6, 7, 3, 0, 5}) {
		t.Errorf("validation %v, train %v", va.Dense(), tr.Dense())
	}
}
