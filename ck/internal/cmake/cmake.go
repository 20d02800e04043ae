// Package cmake evaluates the subset of the CMake language that generated
// package configuration files use (…Config.cmake, …Targets.cmake and their
// per-configuration companions): set/unset/list/string, if/elseif/else,
// foreach, macro/function, include, get_filename_component, file(GLOB),
// return, and the target commands (add_library IMPORTED,
// set_target_properties, set_property TARGET). Other commands are recorded
// and otherwise ignored. No cmake binary is needed.
package cmake

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/version"
)

// Command is one parsed command invocation.
type Command struct {
	Name string
	Args []Arg
	Line int
}

// Arg is one argument before evaluation.
type Arg struct {
	Text   string
	Quoted bool // "…" or [[…]]: no list splitting
	Raw    bool // [[…]]: no variable references
}

// ParseError reports a syntax error.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse splits CMake source into commands.
func Parse(file, src string) ([]Command, error) {
	var out []Command
	line := 1
	i := 0
	n := len(src)
	skipSpace := func() {
		for i < n {
			c := src[i]
			switch {
			case c == '\n':
				line++
				i++
			case c == ' ' || c == '\t' || c == '\r':
				i++
			case c == '#':
				if l, ok := bracketLen(src[i+1:]); ok {
					line += strings.Count(src[i:i+1+l], "\n")
					i += 1 + l
					continue
				}
				for i < n && src[i] != '\n' {
					i++
				}
			default:
				return
			}
		}
	}
	for {
		skipSpace()
		if i >= n {
			return out, nil
		}
		start := i
		for i < n && (isIdent(src[i])) {
			i++
		}
		if start == i {
			return nil, &ParseError{file, line, fmt.Sprintf("unexpected %q", src[i])}
		}
		cmd := Command{Name: strings.ToLower(src[start:i]), Line: line}
		for i < n && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		if i >= n || src[i] != '(' {
			return nil, &ParseError{file, line, fmt.Sprintf("expected ( after %s", cmd.Name)}
		}
		i++
		depth := 0
	args:
		for {
			skipSpace()
			if i >= n {
				return nil, &ParseError{file, cmd.Line, "unterminated argument list of " + cmd.Name}
			}
			switch c := src[i]; {
			case c == ')':
				i++
				if depth == 0 {
					break args
				}
				depth--
				cmd.Args = append(cmd.Args, Arg{Text: ")"})
			case c == '(':
				i++
				depth++
				cmd.Args = append(cmd.Args, Arg{Text: "("})
			case c == '"':
				i++
				var b strings.Builder
				for i < n && src[i] != '"' {
					if src[i] == '\\' && i+1 < n {
						switch src[i+1] {
						case 'n':
							b.WriteByte('\n')
						case 't':
							b.WriteByte('\t')
						case '\n':
							line++
						case '$', '"', '\\', ';', '(', ')', '#', ' ':
							if src[i+1] == ';' {
								b.WriteString("\\;")
							} else {
								b.WriteByte(src[i+1])
							}
						default:
							b.WriteByte(src[i+1])
						}
						i += 2
						continue
					}
					if src[i] == '\n' {
						line++
					}
					b.WriteByte(src[i])
					i++
				}
				if i >= n {
					return nil, &ParseError{file, line, "unterminated quoted argument"}
				}
				i++
				cmd.Args = append(cmd.Args, Arg{Text: b.String(), Quoted: true})
			case c == '[':
				if l, ok := bracketLen(src[i:]); ok {
					body := src[i : i+l]
					eq := strings.Index(body[1:], "[") + 1
					close := len(body) - eq - 1
					text := body[eq+1 : close]
					text = strings.TrimPrefix(text, "\n")
					line += strings.Count(body, "\n")
					i += l
					cmd.Args = append(cmd.Args, Arg{Text: text, Quoted: true, Raw: true})
					continue
				}
				fallthrough
			default:
				var b strings.Builder
				for i < n {
					c := src[i]
					if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '(' || c == ')' || c == '#' {
						break
					}
					if c == '"' {
						// quoted part inside an unquoted argument (legacy)
						j := strings.IndexByte(src[i+1:], '"')
						if j < 0 {
							return nil, &ParseError{file, line, "unterminated quote"}
						}
						b.WriteString(src[i : i+j+2])
						i += j + 2
						continue
					}
					if c == '\\' && i+1 < n {
						if src[i+1] == ';' {
							b.WriteString("\\;")
						} else {
							b.WriteByte(src[i+1])
						}
						i += 2
						continue
					}
					if c == '$' && i+1 < n && src[i+1] == '{' {
						// keep ${…} together even with spaces inside
						d, j := 0, i
						for j < n {
							if src[j] == '{' {
								d++
							} else if src[j] == '}' {
								d--
								if d == 0 {
									break
								}
							}
							j++
						}
						if j >= n {
							return nil, &ParseError{file, line, "unterminated ${"}
						}
						b.WriteString(src[i : j+1])
						i = j + 1
						continue
					}
					b.WriteByte(c)
					i++
				}
				cmd.Args = append(cmd.Args, Arg{Text: b.String()})
			}
		}
		out = append(out, cmd)
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// bracketLen returns the length of a bracket argument "[==[ … ]==]" at the
// start of s.
func bracketLen(s string) (int, bool) {
	if len(s) < 2 || s[0] != '[' {
		return 0, false
	}
	j := 1
	for j < len(s) && s[j] == '=' {
		j++
	}
	if j >= len(s) || s[j] != '[' {
		return 0, false
	}
	closer := "]" + strings.Repeat("=", j-1) + "]"
	k := strings.Index(s[j+1:], closer)
	if k < 0 {
		return 0, false
	}
	return j + 1 + k + len(closer), true
}

// Target is an IMPORTED target with its properties.
type Target struct {
	Name       string
	Type       string // STATIC, SHARED, INTERFACE, UNKNOWN
	Properties map[string]string
	DefinedIn  string
}

// Include records an include() the evaluation attempted.
type Include struct {
	Path     string
	Exists   bool
	Optional bool
	From     string // the file that included it
	Line     int
}

// Interp evaluates files.
type Interp struct {
	Vars     map[string]string
	Targets  map[string]*Target
	Includes []Include
	// Errors are message(FATAL_ERROR|SEND_ERROR) texts and failed
	// non-optional includes, as cmake would print them.
	Errors []string
	macros map[string]macro
	depth  int
	// calls is the depth of macro and function calls and includes;
	// commands the commands run; overflow is set when an expansion grew
	// past maxValue.
	calls, commands int
	overflow        bool
	// maxCommands is the command budget; 0 is maxCommands (fuzzing sets
	// a smaller one).
	maxCommands int
}

type macro struct {
	params []string
	body   []Command
	fn     bool
}

// New returns an interpreter with the variables cmake presets for package
// configuration files.
func New() *Interp {
	return &Interp{Vars: map[string]string{"CMAKE_VERSION": "3.25.1", "CMAKE_MAJOR_VERSION": "3", "CMAKE_MINOR_VERSION": "25",
		"CMAKE_SIZEOF_VOID_P": "8", "UNIX": "1", "CMAKE_SYSTEM_NAME": "Linux"},
		Targets: map[string]*Target{}, macros: map[string]macro{}}
}

type returnSignal struct{}

// Limits on evaluating a file someone else wrote (a prefix's CMake
// exports are untrusted input): cmake's own recursion limit, and bounds on
// the work and the memory one evaluation may take.
const (
	// maxCallDepth is CMAKE_MAXIMUM_RECURSION_DEPTH's default: cmake fails
	// with "Maximum recursion depth of 1000 exceeded".
	maxCallDepth = 1000
	// maxCommands bounds the commands one evaluation runs (loops
	// included); a ROCm install's exports run a few thousand.
	maxCommands = 1_000_000
	// maxValue bounds a value (a variable, a property, a command's
	// arguments); a ROCm install's exports hold a few MB in all.
	maxValue = 16 << 20
)

// LimitError is an evaluation stopped at FILE:LINE by a limit. CMakeFails
// says whether cmake fails there too (the recursion limit); the other
// limits are rocmdoctor's, far beyond any real package configuration.
type LimitError struct {
	File       string
	Line       int
	Msg        string
	CMakeFails bool
}

func (e *LimitError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// maxListFile bounds the CMake files read: the largest exports of a ROCm
// install are a few MB.
const maxListFile = 64 << 20

// EvalFile evaluates path with CMAKE_CURRENT_LIST_FILE/DIR set.
func (in *Interp) EvalFile(path string) error {
	// cmake's list-file variables are always absolute.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	b, err := regfile.ReadFileMax(path, maxListFile)
	if err != nil {
		return err
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return fmt.Errorf("%s: a NUL byte at offset %d: binary data, not a CMake file", path, i)
	}
	cmds, err := Parse(path, string(b))
	if err != nil {
		return err
	}
	saveFile, saveDir := in.Vars["CMAKE_CURRENT_LIST_FILE"], in.Vars["CMAKE_CURRENT_LIST_DIR"]
	in.Vars["CMAKE_CURRENT_LIST_FILE"], in.Vars["CMAKE_CURRENT_LIST_DIR"] = path, filepath.Dir(path)
	defer func() { in.Vars["CMAKE_CURRENT_LIST_FILE"], in.Vars["CMAKE_CURRENT_LIST_DIR"] = saveFile, saveDir }()
	in.depth++
	defer func() { in.depth-- }()
	if in.depth > 32 {
		return fmt.Errorf("%s: include depth exceeds 32", path)
	}
	_, err = in.run(path, cmds)
	if _, ok := err.(returnSignal); ok {
		return nil
	}
	return err
}

func (returnSignal) Error() string { return "return()" }

var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^${}]*)\}|\$ENV\{([^}]*)\}`) })

// Expand substitutes ${VAR} (innermost first) and $ENV{VAR} (always empty).
func (in *Interp) Expand(s string) string {
	for i := 0; i < 32 && (strings.Contains(s, "${") || strings.Contains(s, "$ENV{")); i++ {
		next := varRef().ReplaceAllStringFunc(s, func(m string) string {
			sub := varRef().FindStringSubmatch(m)
			if strings.HasPrefix(m, "$ENV") {
				return ""
			}
			return in.Vars[sub[1]]
		})
		if next == s {
			break
		}
		if len(next) > maxValue {
			in.overflow = true
			return ""
		}
		s = next
	}
	return s
}

// args evaluates command arguments into a flat list.
func (in *Interp) args(as []Arg) []string {
	var out []string
	for _, a := range as {
		v := a.Text
		if !a.Raw {
			v = in.Expand(v)
		}
		if a.Quoted {
			out = append(out, strings.ReplaceAll(v, "\\;", ";"))
			continue
		}
		if v == "" {
			continue
		}
		out = append(out, SplitList(v)...)
	}
	return out
}

// SplitList splits a CMake list at unescaped semicolons, dropping empty
// elements as unquoted arguments do.
func SplitList(v string) []string {
	if !strings.Contains(v, `\;`) {
		// Substrings of v, not copies: a list of a million items costs
		// its slice only.
		out := strings.Split(v, ";")
		return slices.DeleteFunc(out, func(s string) bool { return s == "" })
	}
	var out []string
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ';':
			b.WriteByte(';')
			i++
		case v[i] == ';':
			if b.Len() > 0 {
				out = append(out, b.String())
			}
			b.Reset()
		default:
			b.WriteByte(v[i])
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// run executes cmds; it returns after a matching block end for nested use.
func (in *Interp) run(file string, cmds []Command) (int, error) {
	for i := 0; i < len(cmds); i++ {
		c := cmds[i]
		if in.commands++; in.commands > in.budget() {
			return 0, &LimitError{File: file, Line: c.Line, Msg: fmt.Sprintf("more than %d commands run: evaluation stopped (a loop that does not end?)", in.budget())}
		}
		if err := in.grown(file, c.Line); err != nil {
			return 0, err
		}
		switch c.Name {
		case "if":
			end, branches, err := ifBlock(cmds, i)
			if err != nil {
				return 0, &ParseError{file, c.Line, err.Error()}
			}
			for _, br := range branches {
				if br.cond == nil || in.cond(br.cond) {
					if _, err := in.run(file, cmds[br.start:br.end]); err != nil {
						return 0, err
					}
					break
				}
			}
			i = end
		case "foreach":
			end, err := blockEnd(cmds, i, "foreach", "endforeach")
			if err != nil {
				return 0, &ParseError{file, c.Line, err.Error()}
			}
			args := in.args(c.Args)
			if len(args) == 0 {
				return 0, &ParseError{file, c.Line, "foreach without a loop variable"}
			}
			v, items := args[0], in.foreachItems(args[1:])
			if len(items) > in.budget()-in.commands {
				return 0, &LimitError{File: file, Line: c.Line, Msg: fmt.Sprintf("a foreach over %d items: more than the %d commands an evaluation may run", len(items), in.budget())}
			}
			for _, it := range items {
				in.Vars[v] = it
				if _, err := in.run(file, cmds[i+1:end]); err != nil {
					return 0, err
				}
			}
			i = end
		case "macro", "function":
			end, err := blockEnd(cmds, i, c.Name, "end"+c.Name)
			if err != nil {
				return 0, &ParseError{file, c.Line, err.Error()}
			}
			args := in.args(c.Args)
			if len(args) > 0 {
				in.macros[strings.ToLower(args[0])] = macro{params: args[1:], body: cmds[i+1 : end], fn: c.Name == "function"}
			}
			i = end
		default:
			if err := in.exec(file, c); err != nil {
				return 0, err
			}
			if err := in.grown(file, c.Line); err != nil {
				return 0, err
			}
		}
	}
	return len(cmds), nil
}

func (in *Interp) budget() int {
	if in.maxCommands > 0 {
		return in.maxCommands
	}
	return maxCommands
}

// fits reports whether a value of n bytes may be stored, and marks the
// evaluation overflowed when not.
func (in *Interp) fits(n int) bool {
	if n > maxValue || n < 0 {
		in.overflow = true
		return false
	}
	return true
}

// grown reports a value that grew past maxValue, at the command that
// grew it.
func (in *Interp) grown(file string, line int) error {
	if in.overflow {
		return &LimitError{File: file, Line: line, Msg: fmt.Sprintf("a value grows past %d MiB: evaluation stopped", maxValue>>20)}
	}
	return nil
}

type branch struct {
	cond       []string // nil for else
	start, end int
}

func blockEnd(cmds []Command, i int, open, close string) (int, error) {
	depth := 0
	for j := i; j < len(cmds); j++ {
		switch cmds[j].Name {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("%s without %s", open, close)
}

func ifBlock(cmds []Command, i int) (int, []branch, error) {
	end, err := blockEnd(cmds, i, "if", "endif")
	if err != nil {
		return 0, nil, err
	}
	var brs []branch
	cur := branch{cond: argTexts(cmds[i].Args), start: i + 1}
	depth := 0
	for j := i + 1; j < end; j++ {
		switch cmds[j].Name {
		case "if":
			depth++
		case "endif":
			depth--
		case "elseif", "else":
			if depth == 0 {
				cur.end = j
				brs = append(brs, cur)
				cur = branch{start: j + 1}
				if cmds[j].Name == "elseif" {
					cur.cond = argTexts(cmds[j].Args)
					if cur.cond == nil {
						cur.cond = []string{}
					}
				}
			}
		}
	}
	cur.end = end
	brs = append(brs, cur)
	return end, brs, nil
}

// argTexts keeps arguments unexpanded for if(), marking quoted ones.
func argTexts(as []Arg) []string {
	out := []string{}
	for _, a := range as {
		t := a.Text
		if a.Quoted {
			t = "\x00" + t // quoted: never a variable name
		}
		out = append(out, t)
	}
	return out
}

func (in *Interp) foreachItems(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	switch args[0] {
	case "IN":
		var out []string
		mode := ""
		for _, a := range args[1:] {
			switch a {
			case "LISTS", "ITEMS", "ZIP_LISTS":
				mode = a
				continue
			}
			if mode == "LISTS" {
				out = append(out, SplitList(in.Vars[a])...)
			} else {
				out = append(out, a)
			}
		}
		return out
	case "RANGE":
		var lo, hi, step int64 = 0, 0, 1
		nums := args[1:]
		switch len(nums) {
		case 1:
			hi, _ = strconv.ParseInt(nums[0], 10, 64)
		case 2, 3:
			lo, _ = strconv.ParseInt(nums[0], 10, 64)
			hi, _ = strconv.ParseInt(nums[1], 10, 64)
			if len(nums) == 3 {
				step, _ = strconv.ParseInt(nums[2], 10, 64)
			}
		}
		var out []string
		for v := lo; v <= hi && step > 0 && len(out) < 10000; v += step {
			out = append(out, strconv.FormatInt(v, 10))
		}
		return out
	}
	return args
}

func truthy(v string) bool {
	switch strings.ToUpper(v) {
	case "", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND":
		return false
	}
	return !strings.HasSuffix(strings.ToUpper(v), "-NOTFOUND")
}

// cond evaluates an if() condition (unexpanded arguments).
func (in *Interp) cond(raw []string) bool {
	toks := make([]string, 0, len(raw))
	quoted := make([]bool, 0, len(raw))
	for _, t := range raw {
		q := strings.HasPrefix(t, "\x00")
		t = strings.TrimPrefix(t, "\x00")
		toks = append(toks, in.Expand(t))
		quoted = append(quoted, q)
	}
	p := &condParser{in: in, toks: toks, quoted: quoted}
	return p.or()
}

type condParser struct {
	in     *Interp
	toks   []string
	quoted []bool
	pos    int
}

func (p *condParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *condParser) or() bool {
	v := p.and()
	for p.peek() == "OR" {
		p.pos++
		r := p.and()
		v = v || r
	}
	return v
}

func (p *condParser) and() bool {
	v := p.not()
	for p.peek() == "AND" {
		p.pos++
		r := p.not()
		v = v && r
	}
	return v
}

func (p *condParser) not() bool {
	if p.peek() == "NOT" && !p.quoted[p.pos] {
		p.pos++
		return !p.not()
	}
	return p.binary()
}

// value returns a token's value: a variable's when the token names one.
func (p *condParser) value(i int) string {
	t := p.toks[i]
	if !p.quoted[i] {
		if v, ok := p.in.Vars[t]; ok {
			return v
		}
	}
	return t
}

func (p *condParser) binary() bool {
	if p.pos >= len(p.toks) {
		return false
	}
	if p.peek() == "(" {
		p.pos++
		v := p.or()
		if p.peek() == ")" {
			p.pos++
		}
		return v
	}
	switch op := p.peek(); op {
	case "DEFINED", "EXISTS", "TARGET", "IS_DIRECTORY", "COMMAND", "IS_ABSOLUTE":
		p.pos++
		if p.pos >= len(p.toks) {
			return false
		}
		arg := p.toks[p.pos]
		p.pos++
		switch op {
		case "DEFINED":
			_, ok := p.in.Vars[arg]
			return ok
		case "EXISTS":
			_, err := os.Stat(arg)
			return arg != "" && err == nil
		case "TARGET":
			_, ok := p.in.Targets[arg]
			return ok
		case "IS_DIRECTORY":
			st, err := os.Stat(arg)
			return err == nil && st.IsDir()
		case "COMMAND":
			_, ok := p.in.macros[strings.ToLower(arg)]
			return ok || knownCommands[strings.ToLower(arg)]
		case "IS_ABSOLUTE":
			return filepath.IsAbs(arg)
		}
	}
	li := p.pos
	p.pos++
	if p.pos < len(p.toks) {
		op := p.toks[p.pos]
		if binaryOps[op] && p.pos+1 < len(p.toks) {
			ri := p.pos + 1
			p.pos += 2
			l, r := p.value(li), p.value(ri)
			switch op {
			case "STREQUAL":
				return l == r
			case "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL":
				a, _ := strconv.ParseFloat(l, 64)
				b, _ := strconv.ParseFloat(r, 64)
				return map[string]bool{"EQUAL": a == b, "LESS": a < b, "GREATER": a > b, "LESS_EQUAL": a <= b, "GREATER_EQUAL": a >= b}[op]
			case "VERSION_LESS", "VERSION_GREATER", "VERSION_EQUAL", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL":
				c := version.Compare(l, r)
				return map[string]bool{"VERSION_LESS": c < 0, "VERSION_GREATER": c > 0, "VERSION_EQUAL": c == 0,
					"VERSION_LESS_EQUAL": c <= 0, "VERSION_GREATER_EQUAL": c >= 0}[op]
			case "IN_LIST":
				for _, x := range SplitList(p.in.Vars[p.toks[ri]]) {
					if x == l {
						return true
					}
				}
				return false
			case "MATCHES":
				re, err := regexp.Compile(r)
				return err == nil && re.MatchString(l)
			}
		}
	}
	return p.truth(li)
}

// truth applies if(<constant|variable|string>): constants by their value,
// other unquoted words as variable names (undefined is false), quoted
// strings true only when they spell a true constant.
func (p *condParser) truth(i int) bool {
	t := p.toks[i]
	if isConstant(t) {
		return truthy(t)
	}
	if p.quoted[i] {
		return false
	}
	v, ok := p.in.Vars[t]
	return ok && truthy(v)
}

func isConstant(t string) bool {
	switch strings.ToUpper(t) {
	case "1", "ON", "YES", "TRUE", "Y", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND", "":
		return true
	}
	if strings.HasSuffix(strings.ToUpper(t), "-NOTFOUND") {
		return true
	}
	_, err := strconv.ParseFloat(t, 64)
	return err == nil
}

var binaryOps = map[string]bool{"STREQUAL": true, "EQUAL": true, "LESS": true, "GREATER": true, "LESS_EQUAL": true,
	"GREATER_EQUAL": true, "VERSION_LESS": true, "VERSION_GREATER": true, "VERSION_EQUAL": true, "VERSION_LESS_EQUAL": true,
	"VERSION_GREATER_EQUAL": true, "IN_LIST": true, "MATCHES": true}

var knownCommands = map[string]bool{"set": true, "include": true, "if": true, "foreach": true, "list": true, "message": true,
	"get_filename_component": true, "set_target_properties": true, "add_library": true, "set_property": true}

func (in *Interp) exec(file string, c Command) error {
	if m, ok := in.macros[c.Name]; ok {
		return in.call(file, c, m)
	}
	args := in.args(c.Args)
	switch c.Name {
	case "set":
		in.set(args)
	case "unset":
		if len(args) > 0 {
			delete(in.Vars, args[0])
		}
	case "list":
		in.list(args)
	case "string":
		in.stringCmd(args)
	case "get_filename_component":
		in.getFilenameComponent(args)
	case "file":
		in.file(args)
	case "include":
		return in.include(file, c, args)
	case "return":
		return returnSignal{}
	case "message":
		if len(args) > 1 && (args[0] == "FATAL_ERROR" || args[0] == "SEND_ERROR") {
			in.Errors = append(in.Errors, fmt.Sprintf("%s:%d (message): %s", file, c.Line, strings.Join(args[1:], "")))
			if args[0] == "FATAL_ERROR" {
				return returnSignal{}
			}
		}
	case "add_library":
		if len(args) >= 2 && slices.Contains(args, "IMPORTED") {
			in.Targets[args[0]] = &Target{Name: args[0], Type: args[1], Properties: map[string]string{}, DefinedIn: file}
		}
	case "set_target_properties":
		in.setTargetProperties(args)
	case "set_property":
		in.setProperty(args)
	}
	return nil
}

// call runs macro or function m: its parameters, ARGV, ARGC and ARGN set
// for the call and restored after it.
func (in *Interp) call(file string, c Command, m macro) error {
	if in.calls++; in.calls > maxCallDepth {
		return &LimitError{File: file, Line: c.Line, Msg: fmt.Sprintf("Maximum recursion depth of %d exceeded (calling %s)", maxCallDepth, c.Name), CMakeFails: true}
	}
	defer func() { in.calls-- }()
	args := in.args(c.Args)
	saved := map[string]*string{}
	set := func(k, v string) {
		if _, done := saved[k]; !done {
			if old, ok := in.Vars[k]; ok {
				o := old
				saved[k] = &o
			} else {
				saved[k] = nil
			}
		}
		in.Vars[k] = v
	}
	for i, p := range m.params {
		if i < len(args) {
			set(p, args[i])
		} else {
			set(p, "")
		}
	}
	set("ARGV", strings.Join(args, ";"))
	set("ARGC", strconv.Itoa(len(args)))
	if len(args) > len(m.params) {
		set("ARGN", strings.Join(args[len(m.params):], ";"))
	} else {
		set("ARGN", "")
	}
	_, err := in.run(file, m.body)
	if _, ok := err.(returnSignal); ok && m.fn {
		err = nil
	}
	// Macro and function parameters do not outlive the call.
	for k, v := range saved {
		if v == nil {
			delete(in.Vars, k)
		} else {
			in.Vars[k] = *v
		}
	}
	return err
}

// set is set(VAR values... [CACHE ...|PARENT_SCOPE]).
func (in *Interp) set(args []string) {
	if len(args) == 0 {
		return
	}
	vals := args[1:]
	for i, v := range vals {
		if v == "CACHE" || v == "PARENT_SCOPE" {
			vals = vals[:i]
			break
		}
	}
	if len(vals) == 0 {
		delete(in.Vars, args[0])
	} else {
		in.Vars[args[0]] = strings.Join(vals, ";")
	}
}

// getFilenameComponent is get_filename_component(VAR PATH MODE).
func (in *Interp) getFilenameComponent(args []string) {
	if len(args) < 3 {
		return
	}
	v, p, mode := args[0], args[1], args[2]
	switch mode {
	case "PATH", "DIRECTORY":
		in.Vars[v] = filepath.Dir(p)
		if in.Vars[v] == "." {
			in.Vars[v] = ""
		}
	case "NAME":
		in.Vars[v] = filepath.Base(p)
	case "NAME_WE":
		b := filepath.Base(p)
		if i := strings.Index(b, "."); i > 0 {
			b = b[:i]
		}
		in.Vars[v] = b
	case "EXT":
		b := filepath.Base(p)
		if i := strings.Index(b, "."); i >= 0 {
			in.Vars[v] = b[i:]
		} else {
			in.Vars[v] = ""
		}
	case "ABSOLUTE", "REALPATH":
		if !filepath.IsAbs(p) {
			p = filepath.Join(in.Vars["CMAKE_CURRENT_LIST_DIR"], p)
		}
		p = filepath.Clean(p)
		if mode == "REALPATH" {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
		}
		in.Vars[v] = p
	}
}

// file is file(GLOB|GLOB_RECURSE VAR patterns...); its other forms
// change nothing an evaluation of a config reads.
func (in *Interp) file(args []string) {
	if len(args) >= 3 && (args[0] == "GLOB" || args[0] == "GLOB_RECURSE") {
		var all []string
		for _, pat := range args[2:] {
			if pat == "LIST_DIRECTORIES" || pat == "RELATIVE" || pat == "CONFIGURE_DEPENDS" {
				continue
			}
			m, _ := filepath.Glob(pat)
			all = append(all, m...)
		}
		sort.Strings(all)
		in.Vars[args[1]] = strings.Join(all, ";")
	}
}

// include is include(FILE [OPTIONAL]): recorded, and evaluated when the
// file exists; a CMake module (no slash, no .cmake) is passed over.
func (in *Interp) include(file string, c Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	p := args[0]
	optional := slices.Contains(args[1:], "OPTIONAL")
	if !strings.Contains(p, "/") && !strings.HasSuffix(p, ".cmake") {
		return nil // a CMake module such as CMakeFindDependencyMacro
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(in.Vars["CMAKE_CURRENT_LIST_DIR"], p)
	}
	_, err := os.Stat(p)
	in.Includes = append(in.Includes, Include{Path: p, Exists: err == nil, Optional: optional, From: file, Line: c.Line})
	if err != nil {
		if !optional {
			in.Errors = append(in.Errors, fmt.Sprintf("%s:%d (include): include could not find requested file:\n\n    %s", file, c.Line, p))
		}
		return nil
	}
	return in.EvalFile(p)
}

// setTargetProperties is set_target_properties(targets... PROPERTIES
// name value...).
func (in *Interp) setTargetProperties(args []string) {
	var targets []string
	i := 0
	for ; i < len(args) && args[i] != "PROPERTIES"; i++ {
		targets = append(targets, args[i])
	}
	for j := i + 1; j+1 < len(args); j += 2 {
		for _, t := range targets {
			if tg := in.Targets[t]; tg != nil {
				tg.Properties[args[j]] = args[j+1]
			}
		}
	}
}

// setProperty is set_property(TARGET t [APPEND] PROPERTY name values...).
func (in *Interp) setProperty(args []string) {
	if len(args) < 4 || args[0] != "TARGET" {
		return
	}
	tg := in.Targets[args[1]]
	k := 2
	appendMode := false
	for k < len(args) && args[k] != "PROPERTY" {
		appendMode = appendMode || args[k] == "APPEND"
		k++
	}
	if tg != nil && k+1 < len(args) {
		name, vals := args[k+1], strings.Join(args[k+2:], ";")
		if appendMode && tg.Properties[name] != "" {
			if !in.fits(len(tg.Properties[name]) + 1 + len(vals)) {
				return
			}
			vals = tg.Properties[name] + ";" + vals
		}
		tg.Properties[name] = vals
	}
}

func (in *Interp) list(args []string) {
	if len(args) < 2 {
		return
	}
	op, v := args[0], args[1]
	switch op {
	case "APPEND", "PREPEND":
		add := strings.Join(args[2:], ";")
		if !in.fits(len(in.Vars[v]) + len(add) + 1) {
			return
		}
		switch {
		case add == "":
		case in.Vars[v] == "":
			in.Vars[v] = add
		case op == "APPEND":
			in.Vars[v] += ";" + add
		default:
			in.Vars[v] = add + ";" + in.Vars[v]
		}
		return
	}
	cur := SplitList(in.Vars[v])
	switch op {
	case "LENGTH":
		if len(args) > 2 {
			in.Vars[args[2]] = strconv.Itoa(len(cur))
		}
	case "REMOVE_DUPLICATES":
		var out []string
		for _, x := range cur {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		in.Vars[v] = strings.Join(out, ";")
	case "REMOVE_ITEM":
		var out []string
		for _, x := range cur {
			if !slices.Contains(args[2:], x) {
				out = append(out, x)
			}
		}
		in.Vars[v] = strings.Join(out, ";")
	case "FIND":
		if len(args) > 3 {
			idx := -1
			for i, x := range cur {
				if x == args[2] {
					idx = i
					break
				}
			}
			in.Vars[args[3]] = strconv.Itoa(idx)
		}
	}
}

func (in *Interp) stringCmd(args []string) {
	if len(args) < 3 {
		return
	}
	switch args[0] {
	case "TOLOWER":
		in.Vars[args[2]] = strings.ToLower(args[1])
	case "TOUPPER":
		in.Vars[args[2]] = strings.ToUpper(args[1])
	case "REPLACE":
		if len(args) >= 5 {
			src := strings.Join(args[4:], "")
			// Counted first: the result may be far larger than the input.
			if n := strings.Count(src, args[1]); !in.fits(len(src) + n*(len(args[2])-len(args[1]))) {
				return
			}
			in.Vars[args[3]] = strings.ReplaceAll(src, args[1], args[2])
		}
	case "APPEND":
		if !in.fits(len(in.Vars[args[1]]) + len(strings.Join(args[2:], ""))) {
			return
		}
		in.Vars[args[1]] += strings.Join(args[2:], "")
	}
}
