package theory

import "testing"

func BenchmarkSweepPeak(b *testing.B) {
	fs := SSC.FS(3825.67)
	for b.Loop() {
		SweepPeak(fs)
	}
}

func BenchmarkDTTargetClosedForm(b *testing.B) {
	fs := SSC.FS(3825.67)
	for b.Loop() {
		fs.Target()
	}
}

func BenchmarkClosedLoopBode(b *testing.B) {
	cl := ClosedLoop{FS: SSC.FS(3825.67), TS: TS{Beta: []float64{0.3, -0.2}, Lambda: []float64{0.1, 0.4}}}
	grid := LinSpace(0, 3.14159, 512)
	for b.Loop() {
		BodeOf(cl, grid)
	}
}
