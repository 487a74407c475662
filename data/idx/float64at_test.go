package idx

import (
	"encoding/binary"
	"math"
)

// Float64At returns element i converted to float64.
func (a *Array) Float64At(i int) float64 {
	s := a.Type.Size()
	b := a.Data[i*s : (i+1)*s]
	switch a.Type {
	case Uint8:
		return float64(b[0])
	case Int8:
		return float64(int8(b[0]))
	case Int16:
		return float64(int16(binary.BigEndian.Uint16(b)))
	case Int32:
		return float64(int32(binary.BigEndian.Uint32(b)))
	case Float32:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case Float64:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	return math.NaN()
}
