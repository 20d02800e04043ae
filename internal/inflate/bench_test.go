package inflate

import (
	"bytes"
	"compress/flate"
	"io"
	"os"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// The provider library of a wheel relink is libLLVM-sized; compare with
// compress/flate on the same stream.
func benchInput(b *testing.B) []byte {
	data, err := os.ReadFile(testenv.File(b, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15"))
	if err != nil {
		b.Fatal(err)
	}
	return deflate(b, data[:32<<20], 1)
}

func BenchmarkDecode(b *testing.B) {
	comp := benchInput(b)
	b.SetBytes(32 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(io.Discard, bytes.NewReader(comp), int64(len(comp))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlib(b *testing.B) {
	comp := benchInput(b)
	b.SetBytes(32 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := io.Copy(io.Discard, flate.NewReader(bytes.NewReader(comp))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeParts: the same stream cut into parts as on a machine
// with cores to spare (partsFor with eight cores).
func BenchmarkDecodeParts(b *testing.B) {
	comp := benchInput(b)
	n := int64(len(comp))
	k := partsFor(n, 8)
	if k < 2 {
		b.Fatalf("a %d-byte stream is not cut", n)
	}
	b.SetBytes(32 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := decode(io.Discard, bytes.NewReader(comp), n, k); err != nil {
			b.Fatal(err)
		}
	}
}
