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

// BenchmarkCopyBits: the reused blocks of a splice copied at an odd bit
// offset (a changed library's unchanged blocks, ~38 MB on the bench wheel).
func BenchmarkCopyBits(b *testing.B) {
	src := make([]byte, 8<<20)
	for i := range src {
		src[i] = byte(i * 131)
	}
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		w := &bitWriter{w: io.Discard, buf: make([]byte, 0, 1<<16)}
		w.bits(5, 3)
		if err := w.copyBits(bytes.NewReader(src), 1, int64(len(src))*8); err != nil {
			b.Fatal(err)
		}
	}
}
