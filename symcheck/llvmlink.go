package symcheck

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/walk"
)

// llvmLinkSet completes the LLVM libraries a diagnosis names to what a
// link of them really needs: as the link editor does, it takes from the
// LLVM archives under dirs (libLLVM*.a) the members that define the
// missing initialisers, then the members that define what those leave
// undefined, and so on until nothing new is missing. Names the inputs
// already define (defined) or that no LLVM archive defines (the C
// library's, zlib's) end the search. It returns the archives' library
// names in the order they were first needed, which is a working link
// order (a library before those that resolve its references), and nil
// when dirs hold no LLVM archive.
func llvmLinkSet(ctx context.Context, dirs []string, d *LLVMDiagnosis, defined func(string) bool, h *elfx.Header) (libs []string, cyclic bool, err error) {
	archives := map[string]*elfx.Archive{}
	byName := map[string]struct {
		path   string
		member int
	}{}
	defer func() {
		for _, a := range archives {
			a.Close()
		}
	}()
	for _, dir := range dirs {
		err := walk.Dir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasPrefix(e.Name(), "libLLVM") || !strings.HasSuffix(e.Name(), ".a") {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			a, err := elfx.OpenArchive(p)
			if err != nil || !a.HasIndex {
				if a != nil {
					a.Close()
				}
				return nil
			}
			archives[p] = a
			for _, s := range a.Symbols {
				if _, ok := byName[s.Name]; !ok && s.Member >= 0 {
					byName[s.Name] = struct {
						path   string
						member int
					}{p, s.Member}
				}
			}
			return nil
		})
		if err != nil {
			return nil, false, err
		}
	}
	if len(archives) == 0 {
		return nil, false, nil
	}
	type want struct{ name, from string } // from: the archive that needs it ("" for the inputs)
	var queue []want
	for _, t := range d.Missing {
		for _, c := range t.Missing {
			queue = append(queue, want{"LLVMInitialize" + t.Target + c, ""})
		}
	}
	edges := map[string]map[string]bool{} // archive -> archives it needs
	pulled := map[string]bool{}           // archive path + member
	have := map[string]bool{}             // names the pulled members define
	var order []string
	inOrder := map[string]bool{}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		w := queue[0]
		queue = queue[1:]
		n := w.name
		if defined != nil && defined(n) {
			continue
		}
		at, ok := byName[n]
		if !ok {
			continue // not LLVM's: the system's libraries or the toolchain
		}
		if w.from != "" && w.from != at.path {
			if edges[w.from] == nil {
				edges[w.from] = map[string]bool{}
			}
			edges[w.from][at.path] = true
		}
		if have[n] {
			continue
		}
		key := at.path + "\x00" + strconv.Itoa(at.member)
		if pulled[key] {
			continue
		}
		pulled[key] = true
		if !inOrder[at.path] {
			inOrder[at.path] = true
			order = append(order, at.path)
		}
		f, err := archives[at.path].OpenELF(at.member)
		if err != nil || h != nil && (f.Header.Class != h.Class || f.Header.Machine != h.Machine) {
			continue
		}
		syms, _ := f.Symbols()
		for _, s := range syms {
			switch {
			case s.Defined() && exported(s):
				have[s.Name] = true
			case !s.Defined() && s.Name != "":
				queue = append(queue, want{s.Name, at.path})
			}
		}
	}
	sorted, cyclic := linkOrder(order, edges)
	libs = make([]string, len(sorted))
	for i, p := range sorted {
		libs[i] = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "lib"), ".a")
	}
	return libs, cyclic, nil
}

// linkOrder orders archives so that each comes before those it needs, as
// a one-pass link editor requires (a depth-first topological order,
// stable in the order they were first needed); cyclic reports archives
// that need each other, which only a group (--start-group) links.
func linkOrder(order []string, edges map[string]map[string]bool) (out []string, cyclic bool) {
	const (
		fresh = iota
		active
		done
	)
	state := map[string]int{}
	var post []string
	var visit func(a string)
	visit = func(a string) {
		state[a] = active
		for _, b := range order { // (deterministic: in first-needed order)
			if !edges[a][b] {
				continue
			}
			switch state[b] {
			case fresh:
				visit(b)
			case active:
				cyclic = true
			}
		}
		state[a] = done
		post = append(post, a)
	}
	for _, a := range order {
		if state[a] == fresh {
			visit(a)
		}
	}
	for i := len(post) - 1; i >= 0; i-- {
		out = append(out, post[i])
	}
	return out, cyclic
}
