package rpath_test

import (
	"debug/elf"
	"sync"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// TestCorpusAgreesWithLdd is the CI tier's differential against the real
// loader: for every dynamic ELF file under /usr/lib/x86_64-linux-gnu (which
// holds Debian's libamdhip64, libhsa-runtime64, librocsparse, libamd_comgr,
// librocm_smi64, libLLVM-15, libunwind and libunwind8 in CI), and for the
// 32-bit libraries of /usr/lib32 (gcc-multilib's, which ldd hands to the
// 32-bit loader), the resolver must bind each library to the path ldd
// reports, in ldd's order.
func TestCorpusAgreesWithLdd(t *testing.T) {
	testenv.Corpus(t)
	testenv.Tool(t, "ldd", "libc-bin")
	for p, pkg := range map[string]string{
		"/usr/lib/x86_64-linux-gnu/libamdhip64.so.5":      "libamdhip64-5",
		"/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1": "libhsa-runtime64-1",
		"/usr/lib/x86_64-linux-gnu/librocsparse.so.0":     "librocsparse0",
		"/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2":     "libamd-comgr2",
		"/usr/lib/librocm_smi64.so.1":                     "librocm-smi64-1",
		"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1":       "libllvm15",
		"/usr/lib/llvm-15/lib/libunwind.so.1":             "libunwind-15",
		"/usr/lib/x86_64-linux-gnu/libunwind.so.8":        "libunwind8",
		"/usr/lib32/libstdc++.so.6":                       "gcc-multilib",
	} {
		testenv.File(t, p, pkg)
	}
	files := testenv.DynamicFiles(t, "/usr/lib/x86_64-linux-gnu", elf.EM_X86_64)
	files = append(files, "/usr/lib/llvm-15/lib/libunwind.so.1", "/usr/lib/librocm_smi64.so.1")
	is32 := map[string]bool{}
	for _, p := range testenv.DynamicFiles(t, "/usr/lib32", elf.EM_386) {
		files = append(files, p)
		is32[p] = true
	}
	var mu sync.Mutex
	agree, agree32, skipped := 0, 0, 0
	ch := make(chan string)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				want, err := ldd(p, nil)
				if err != nil || len(want) == 0 {
					// ldd refuses some files (the loader itself, static PIE);
					// nothing to compare.
					mu.Lock()
					skipped++
					mu.Unlock()
					continue
				}
				err = compareWithLdd(p, rpath.Options{}, nil)
				mu.Lock()
				if err != nil {
					t.Errorf("%s: %v", p, err)
				} else {
					agree++
					if is32[p] {
						agree32++
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range files {
		ch <- p
	}
	close(ch)
	wg.Wait()
	t.Logf("rpath agrees with ldd on %d of %d dynamic ELF files, %d of them 32-bit (%d without ldd output)", agree, len(files)-skipped, agree32, skipped)
	switch {
	case agree < 100 || (agree32 < 20 && testenv.Runs32()):
		t.Errorf("only %d files compared, %d of them 32-bit; the corpus is not installed?", agree, agree32)
	case !testenv.Runs32():
		t.Log("this kernel does not execute 32-bit x86 programs (no IA32 emulation), so ldd has nothing to say about the 32-bit files: they are not compared")
	}
}
