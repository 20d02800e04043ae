package pflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

func roundTrip(t *testing.T, data []byte, writes int) []byte {
	t.Helper()
	var buf bytes.Buffer
	z, err := NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	// Feed it in uneven pieces.
	p := data
	for i := 0; len(p) > 0; i++ {
		k := min(len(p), 1+(i*7919)%max(1, len(data)/max(1, writes)))
		if _, err := z.Write(p[:k]); err != nil {
			t.Fatal(err)
		}
		p = p[k:]
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(flate.NewReader(bytes.NewReader(buf.Bytes())))
	if err != nil {
		t.Fatalf("inflating %d bytes of output: %v", buf.Len(), err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("round trip of %d bytes gave %d different bytes", len(data), len(got))
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	text := bytes.Repeat([]byte("_ZN4llvm11LLVMContextC1Ev\x00GLIBC_2.2.5\x00"), 200000)
	random := make([]byte, 3*BlockSize+17)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one byte", []byte{42}},
		{"block-1", text[:BlockSize-1]},
		{"block", text[:BlockSize]},
		{"block+1", text[:BlockSize+1]},
		{"many blocks of text", text},
		{"incompressible", random},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, writes := range []int{1, 5, 1000} {
				out := roundTrip(t, tc.data, writes)
				if len(tc.data) > 4*BlockSize && len(out) > len(tc.data)/10 {
					t.Errorf("text compressed to %d of %d bytes", len(out), len(tc.data))
				}
			}
		})
	}
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestWriterErrorsSurface(t *testing.T) {
	z, err := NewWriter(&failAfter{n: 2}, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64*BlockSize)
	var werr error
	for i := 0; i < 64 && werr == nil; i++ {
		_, werr = z.Write(data[i*BlockSize : (i+1)*BlockSize])
	}
	cerr := z.Close()
	if cerr == nil || cerr.Error() != "disk full" {
		t.Fatalf("Close = %v, want the underlying write error", cerr)
	}
	if werr == nil {
		t.Errorf("64 blocks written after the underlying writer failed, and Write never said so")
	}
	if z.Close() != cerr {
		t.Errorf("a second Close does not repeat the error")
	}
	if _, err := z.Write([]byte("x")); err == nil {
		t.Errorf("Write after Close succeeded")
	}
}

func TestBadLevel(t *testing.T) {
	if _, err := NewWriter(io.Discard, 42); err == nil {
		t.Fatal("level 42 accepted")
	}
}

func BenchmarkWriter(b *testing.B) {
	data := bytes.Repeat([]byte("_ZN4llvm11LLVMContextC1Ev\x00GLIBC_2.2.5\x00\x01\x02\x03\x04"), 1<<18)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		z, _ := NewWriter(io.Discard, flate.BestSpeed)
		z.Write(data)
		z.Close()
	}
}
