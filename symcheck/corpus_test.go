package symcheck_test

import (
	"context"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// TestCorpusComgrNegativeControl: Debian's libamd_comgr.so.2 has 94
// undefined LLVMInitialize*@LLVM_15, all defined by its NEEDED
// libLLVM-15.so.1 — no finding.
func TestCorpusComgrNegativeControl(t *testing.T) {
	testenv.Corpus(t)
	p := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2", "libamd-comgr2")
	rep := symbols(t, []string{p}, symcheck.SymbolsOptions{})
	if len(rep.Findings) != 0 || rep.LLVM != nil {
		t.Errorf("findings on libamd_comgr.so.2: %+v", rep.Findings)
	}
	f, err := elfx.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.DynamicSymbols()
	n := 0
	for _, s := range syms {
		if !s.Defined() && strings.HasPrefix(s.Name, "LLVMInitialize") && s.Version == "LLVM_15" {
			n++
		}
	}
	if n != 94 {
		t.Errorf("%d undefined LLVMInitialize*@LLVM_15, want 94", n)
	}
}

var lddUndef = regexp.MustCompile(`^undefined symbol: ([^,\t]+)(?:, version (\S+))?\t\((.*)\)$`)
var lddVersion = regexp.MustCompile("^\\s*(?:\\S+: )?version `([^']+)' not found \\(required by (.*)\\)$")

// lddR returns "symbol (file)" and "version V (file)" entries from ldd -r.
func lddR(path string) ([]string, error) {
	out, err := exec.Command("ldd", "-r", path).CombinedOutput()
	if err != nil && len(out) == 0 {
		return nil, err
	}
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if m := lddUndef.FindStringSubmatch(l); m != nil {
			got = append(got, m[1]+" ("+canon(m[3])+")")
		} else if m := lddVersion.FindStringSubmatch(l); m != nil {
			got = append(got, "version "+m[1]+" ("+canon(m[2])+")")
		}
	}
	sort.Strings(got)
	return dedup(got), nil
}

func canon(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func dedup(xs []string) []string {
	var out []string
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// TestCorpusAgreesWithLddR: on every dynamic ELF file under
// /usr/lib/x86_64-linux-gnu, the unresolved symbols and versions of the
// whole closure equal what ldd -r reports. Documented difference: ldd -r
// only sees references that have relocations, so an undefined .dynsym entry
// without one is reported by rocmdoctor alone; such entries are counted,
// not failed. The same over the 32-bit libraries of /usr/lib32
// (gcc-multilib's), bound for EM_386 and run by the 32-bit loader.
func TestCorpusAgreesWithLddR(t *testing.T) {
	testenv.Corpus(t)
	testenv.Tool(t, "ldd", "libc-bin")
	for _, c := range []struct {
		root, lib, pkg string
		machine        elf.Machine
		least          int
	}{
		{"/usr/lib/x86_64-linux-gnu", "libc.so.6", "libc6", elf.EM_X86_64, 100},
		{"/usr/lib32", "libstdc++.so.6", "gcc-multilib", elf.EM_386, 20},
	} {
		t.Run(filepath.Base(c.root), func(t *testing.T) {
			testenv.File(t, filepath.Join(c.root, c.lib), c.pkg)
			bindingAgreesWithLddR(t, c.root, c.machine, c.least)
		})
	}
}

// bindingAgreesWithLddR is TestCorpusAgreesWithLddR for the files of one
// machine under root; at least least of them must be compared.
func bindingAgreesWithLddR(t *testing.T, root string, machine elf.Machine, least int) {
	b := symcheck.NewBinder(rpath.New(rpath.Options{}))
	agree, compared, extra := 0, 0, 0
	for _, p := range testenv.DynamicFiles(t, root, machine) {
		want, err := lddR(p)
		if err != nil {
			continue
		}
		res, err := b.BindDynamic(context.Background(), p, true)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var got []string
		for _, fd := range res.Findings {
			switch fd.Rule {
			case finding.RuleUndefinedSymbol, finding.RuleVersionMismatch:
				got = append(got, fd.Symbol+" ("+canon(fd.File)+")")
			case finding.RuleMissingVersion:
				got = append(got, "version "+fd.Version+" ("+canon(fd.File)+")")
			case finding.RuleMissingLibrary:
				for _, u := range fd.Unresolved {
					name, _, _ := strings.Cut(u, "@")
					got = append(got, name+" ("+canon(fd.File)+")")
				}
			}
		}
		sort.Strings(got)
		got = dedup(got)
		compared++
		missing, more := diff(want, got)
		if len(missing) > 0 {
			t.Errorf("%s: ldd -r reports %v that rocmdoctor does not (rocmdoctor also: %v)", p, missing, more)
			continue
		}
		if len(more) > 0 {
			extra++
			t.Logf("%s: rocmdoctor alone reports %v (references without relocations)", p, more)
		}
		agree++
	}
	t.Logf("symbols agrees with ldd -r on %d of %d files under %s (libthread_db, and in x86_64-linux-gnu libunwind-ptrace and libunwind-coredump, have real findings) (%d with extra unrelocated references)", agree, compared, root, extra)
	if compared < least {
		t.Errorf("only %d files of %s compared", compared, root)
	}
}

func diff(want, got []string) (missing, extra []string) {
	w := map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	g := map[string]bool{}
	for _, x := range got {
		g[x] = true
		if !w[x] {
			extra = append(extra, x)
		}
	}
	for _, x := range want {
		if !g[x] {
			missing = append(missing, x)
		}
	}
	return missing, extra
}
