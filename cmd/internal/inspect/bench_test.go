package inspect

import (
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

func benchInspect(b *testing.B, path string) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if r := Inspect(path); r.Error != "" {
			b.Fatal(r.Error)
		}
	}
}

// BenchmarkInspectFixture measures the whole inspect report on a small
// library with an offload bundle.
func BenchmarkInspectFixture(b *testing.B) { benchInspect(b, testenv.Testdata("libgpu.so")) }

// BenchmarkInspectRocsparse is the target: Debian's 1.3 GB
// librocsparse.so.0 (111 offload bundles) in well under a second.
func BenchmarkInspectRocsparse(b *testing.B) {
	benchInspect(b, testenv.File(b, "/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0"))
}
