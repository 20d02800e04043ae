package elfx_test

import (
	"debug/elf"
	"fmt"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// checkLookup verifies that every defined dynamic symbol is found by a
// hashed lookup with the same version, and undefined ones are reported by
// Undefined.
func checkLookup(f *elfx.File) error {
	syms, err := f.DynamicSymbols()
	if err != nil {
		return err
	}
	t, err := f.DynamicSymbolTable()
	if err != nil {
		return err
	}
	undef := 0
	for _, s := range syms {
		if s.Name == "" {
			continue
		}
		if !s.Defined() {
			undef++
			continue
		}
		found := false
		for _, l := range t.Lookup(s.Name) {
			found = found || (l.Version == s.Version && l.HiddenVersion == s.HiddenVersion && l.Value == s.Value && l.Defined())
		}
		if !found {
			return fmt.Errorf("Lookup(%q) misses %s (got %+v)", s.Name, s.VersionedName(), t.Lookup(s.Name))
		}
	}
	if got := len(t.Undefined()); got != undef {
		return fmt.Errorf("Undefined() = %d symbols, want %d", got, undef)
	}
	if len(t.Lookup("no_such_symbol_anywhere")) != 0 {
		return fmt.Errorf("found a symbol that does not exist")
	}
	return nil
}

func TestSymbolTableLookup(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "libi386.so", "libbe.so", "hello", "libMIOpen.so", "libgpu.so", "libsysv.so"} {
		t.Run(name, func(t *testing.T) {
			if err := checkLookup(open(t, name)); err != nil {
				t.Error(err)
			}
		})
	}
	// The hash styles: gcc/ld on Debian emit only .gnu.hash; lld for ppc64 both.
	f := open(t, "libfoo.so.1")
	if f.ELF().SectionByType(elf.SHT_GNU_HASH) == nil {
		t.Errorf("libfoo.so.1 has no .gnu.hash; the GNU path is untested")
	}
}

func TestCorpusSymbolTableLookup(t *testing.T) {
	testenv.Corpus(t)
	files := testenv.ELFFiles(t, sysLib)
	fails := parallel(files, func(p string) error {
		f, err := elfx.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return checkLookup(f)
	})
	for p, err := range fails {
		t.Errorf("%s: %v", p, err)
	}
	t.Logf("hashed lookup finds every defined dynamic symbol in %d of %d files", len(files)-len(fails), len(files))
}
