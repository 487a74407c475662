package chunked

import "testing"

func TestDefaultChunk(t *testing.T) {
	for _, tc := range []struct{ t, want int }{{250, 25}, {500, 25}, {40, 20}, {7, 7}, {97, 1}, {1, 1}} {
		if got := DefaultChunk(tc.t); got != tc.want {
			t.Errorf("DefaultChunk(%d) = %d, want %d", tc.t, got, tc.want)
		}
	}
}
