package doccheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
)

// root is the repository's root, from this package's folder.
const root = "../.."

const module = "github.com/gocuda/gocuda"

// A block is a fenced block of a page.
type block struct {
	line   int      // the opening fence's line, from 1
	info   string   // the fence's info string: go, sh, ...
	body   []string // the lines between the fences
	marker *marker  // the comment before it, if any
}

// A marker is the HTML comment that says what a fenced block is (doc.go).
type marker struct {
	line    int
	kind    string // output, transcript, example, unchecked, program, source, install
	command string // output: the command
	name    string // program: its folder; example: the Example's function
	dir     string // example: its package's folder
	path    string // source, and program if given: the file it is
}

// A page is README.md or one of docs/*.md.
type page struct {
	file     string   // from the repository's root
	blocks   []*block // its fenced blocks, in order
	prose    string   // the text outside fenced blocks
	problems []string // what does not parse: each with file:line
}

// outputLike are the info strings of blocks that show output, not code.
var outputLike = map[string]bool{"": true, "text": true, "txt": true, "console": true, "output": true, "json": true, "log": true}

var (
	fenceRE    = regexp.MustCompile("^( {0,3})(`{3,}|~{3,})\\s*([^`]*)$")
	commentRE  = regexp.MustCompile(`^\s*<!--\s*(.*?)\s*-->\s*$`)
	listRE     = regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s`)
	exampleRE  = regexp.MustCompile(`^Example (Example\w*) \(([^)]+)\)$`)
	nameRE     = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	programRE  = regexp.MustCompile(`^([a-z][a-z0-9_-]*)(?: \(([^)]+)\))?$`)
	envWordRE  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)
	spanRE     = regexp.MustCompile("(`+)([^`]+?)`+")
	struckRE   = regexp.MustCompile(`~~[^~]*~~`)
	selectorRE = regexp.MustCompile(`(^|[^\w.])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\[[^\]]*\])?(?:\.([A-Z]\w*))?`)
	gocudaRE   = regexp.MustCompile(`(?:^|[\s$(])gocuda ([^|;&]*)`)
)

// pages reads and parses README.md and docs/*.md.
func pages(t *testing.T) []*page {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var ps []*page
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		ps = append(ps, parsePage(filepath.ToSlash(rel), string(src)))
	}
	return ps
}

// parsePage splits a page into its fenced blocks, with their markers, and
// its prose.
func parsePage(file, src string) *page {
	p := &page{file: file}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var prose []string
	var pending *marker
	prevBlank := true
	prevText := "" // the last non-blank line of prose
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			b := &block{line: i + 1, info: strings.TrimSpace(m[3]), marker: pending}
			pending = nil
			indent, fence := len(m[1]), m[2]
			closed := false
			for i++; i < len(lines); i++ {
				c := lines[i]
				if t := strings.TrimSpace(c); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
					closed = true
					break
				}
				b.body = append(b.body, strings.TrimPrefix(c, strings.Repeat(" ", indent)))
			}
			if !closed {
				p.problems = append(p.problems, fmt.Sprintf("%s:%d: the fenced block is not closed", file, b.line))
			}
			p.blocks = append(p.blocks, b)
			prose = append(prose, "")
			prevBlank, prevText = false, ""
			continue
		}
		prose = append(prose, l)
		blank := strings.TrimSpace(l) == ""
		if m := commentRE.FindStringSubmatch(l); m != nil {
			if mk, err := parseMarker(m[1]); err != nil {
				p.problems = append(p.problems, fmt.Sprintf("%s:%d: %v", file, i+1, err))
			} else if mk != nil {
				if pending != nil {
					p.problems = append(p.problems, fmt.Sprintf("%s:%d: the marker is not followed by a fenced block", file, pending.line))
				}
				mk.line = i + 1
				pending = mk
				continue
			}
		}
		if !blank && pending != nil {
			p.problems = append(p.problems, fmt.Sprintf("%s:%d: the marker is not followed by a fenced block", file, pending.line))
			pending = nil
		}
		// An indented code block: four spaces after a blank line, where
		// the paragraph before was not a list item's.
		if !blank && prevBlank && strings.HasPrefix(strings.ReplaceAll(l, "\t", "    "), "    ") &&
			!listRE.MatchString(prevText) && !strings.HasPrefix(prevText, " ") {
			p.problems = append(p.problems, fmt.Sprintf("%s:%d: an indented code block: fence it (```sh, ```go, or a marked block of output)", file, i+1))
		}
		if !blank {
			prevText = l
		}
		prevBlank = blank
	}
	if pending != nil {
		p.problems = append(p.problems, fmt.Sprintf("%s:%d: the marker is not followed by a fenced block", file, pending.line))
	}
	p.prose = strings.Join(prose, "\n")
	for _, b := range p.blocks {
		if err := b.check(); err != nil {
			p.problems = append(p.problems, fmt.Sprintf("%s:%d: %v", file, b.line, err))
		}
	}
	return p
}

// parseMarker reads an HTML comment's text; it returns nil for a comment
// that is not a marker.
func parseMarker(s string) (*marker, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	kind, arg = strings.TrimSpace(kind), strings.TrimSpace(arg)
	switch kind {
	case "output":
		switch {
		case !hasArg:
			return &marker{kind: "transcript"}, nil
		case strings.HasPrefix(arg, "not checked:"):
			if strings.TrimSpace(strings.TrimPrefix(arg, "not checked:")) == "" {
				return nil, errors.New(`"output: not checked:" needs the reason`)
			}
			return &marker{kind: "unchecked"}, nil
		case strings.HasPrefix(arg, "Example"):
			m := exampleRE.FindStringSubmatch(arg)
			if m == nil {
				return nil, fmt.Errorf("%q: write output: Example ExampleName (folder of its package, . for the root)", s)
			}
			return &marker{kind: "example", name: m[1], dir: m[2]}, nil
		case arg == "":
			return nil, errors.New(`"output:" needs the command (or no colon, for a transcript of "$ " lines)`)
		}
		if _, _, err := splitCommand(arg); err != nil {
			return nil, err
		}
		return &marker{kind: "output", command: arg}, nil
	case "program":
		m := programRE.FindStringSubmatch(arg)
		if m == nil {
			return nil, fmt.Errorf("%q: write program: NAME, a folder name, then (PATH) if it is also that file of the repository", s)
		}
		return &marker{kind: "program", name: m[1], path: m[2]}, nil
	case "source":
		if arg == "" {
			return nil, fmt.Errorf("%q: write source: PATH of the file", s)
		}
		return &marker{kind: "source", path: arg}, nil
	case "install":
		if hasArg {
			return nil, fmt.Errorf("%q: install takes nothing", s)
		}
		return &marker{kind: "install"}, nil
	}
	return nil, nil
}

// check says what is wrong with a block's marking.
func (b *block) check() error {
	m := b.marker
	if m == nil {
		if outputLike[b.info] {
			return errors.New(`a block of output without a marker: put <!-- output: COMMAND -->, <!-- output --> (a transcript of "$ " lines), <!-- output: Example ExampleName (folder) --> or <!-- output: not checked: WHY --> before it, or give code an info string (go, sh)`)
		}
		return nil
	}
	switch m.kind {
	case "program", "source":
		if b.info != "go" {
			return fmt.Errorf("a %s marker on a ```%s block: it marks ```go", m.kind, b.info)
		}
	case "install":
		if b.info != "sh" {
			return fmt.Errorf("an install marker on a ```%s block: it marks ```sh", b.info)
		}
	case "transcript":
		if len(b.body) == 0 || !strings.HasPrefix(b.body[0], "$ ") {
			return errors.New(`a transcript (<!-- output -->) starts with a "$ " line`)
		}
		for _, l := range b.body {
			if c, ok := strings.CutPrefix(l, "$ "); ok {
				if _, _, err := splitCommand(c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// splitCommand splits a command as the shell would (quotes, no
// expansion), into VAR=value words and the command's words.
func splitCommand(s string) (env, argv []string, err error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, nil, fmt.Errorf("%q: an unclosed quote", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case strings.IndexByte("|&;<>()$`\\*?", c) >= 0:
			return nil, nil, fmt.Errorf("%q: the command may not hold %q: it is run without a shell", s, c)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	for len(words) > 0 && envWordRE.MatchString(words[0]) {
		env = append(env, words[0])
		words = words[1:]
	}
	switch {
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && strings.HasPrefix(words[2], "./"),
		len(words) >= 3 && words[0] == "go" && words[1] == "tool" && words[2] == "pprof",
		len(words) >= 1 && words[0] == "gocuda":
		return env, words, nil
	}
	return nil, nil, fmt.Errorf("%q: a command is go run ./PKG, gocuda or go tool pprof, after VAR=value words", s)
}

// TestDocsBlocksAreMarked lists the blocks of output that say nothing of
// where they come from, indented code blocks and stray markers.
func TestDocsBlocksAreMarked(t *testing.T) {
	for _, p := range pages(t) {
		for _, problem := range p.problems {
			t.Error(problem)
		}
	}
}

func TestParsePageClassifiesBlocks(t *testing.T) {
	src := strings.Join([]string{
		"# A page", "", "<!-- output: go run ./x -->", "", "```", "hi", "```", // 3: marked
		"", "```", "unmarked", "```", // 9: output, unmarked
		"", "```go", "package main", "```", // 13: code
		"", "<!-- output -->", "```", "no prompt", "```", // 18: transcript without "$ "
		"", "<!-- output: rm -rf / -->", // 22: not a command we run
		"", "    indented", // 24: indented code
		"", "<!-- program: p -->", "Text.", // 26: a marker before prose
		"", "- a list", "", "    its second paragraph", // not code
		"", "<!-- output: not checked: GPU only -->", "```text", "GPU", "```",
		"", "<!-- a comment of another kind -->", "Text.",
	}, "\n")
	p := parsePage("x.md", src)
	assert.Len(t, p.blocks, 5)
	var lines []int
	for _, pr := range p.problems {
		n, err := strconv.Atoi(strings.SplitN(pr, ":", 3)[1])
		require.NoError(t, err)
		lines = append(lines, n)
	}
	slices.Sort(lines)
	assert.Equal(t, []int{9, 18, 22, 24, 26}, lines, "%s", strings.Join(p.problems, "\n"))
}

// ellipsis stands for any text in a line of output, and alone on a line
// for any number of lines.
const ellipsis = "…"

// lineRE compiles a line of a page into a pattern for a line of output:
// "…" is any text, and spaces next to it are one or more spaces, so that
// a column of figures that vary keeps its alignment on the page.
func lineRE(want string) *regexp.Regexp {
	parts := strings.Split(want, ellipsis)
	var re strings.Builder
	re.WriteString("^")
	for i, part := range parts {
		if i > 0 {
			// The junction: spaces on both sides of … are one stretch.
			left, right := strings.HasSuffix(parts[i-1], " "), strings.HasPrefix(part, " ")
			switch {
			case left && right:
				re.WriteString(" +(?:.* +)?")
			case left:
				re.WriteString(" +.*")
			case right:
				re.WriteString(".* +")
			default:
				re.WriteString(".*")
			}
			part = strings.TrimLeft(part, " ")
		}
		if i < len(parts)-1 {
			part = strings.TrimRight(part, " ")
		}
		re.WriteString(regexp.QuoteMeta(part))
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String())
}

// clean drops trailing spaces and trailing blank lines.
func clean(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " \t\r")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// match reports whether got matches the page's lines want; if not, it
// returns the first line of want that no alignment with got gets past
// (len(want) when got has lines more).
func match(want, got []string) (bool, int) {
	want, got = clean(want), clean(got)
	// pre[i][j]: want[:i] matches got[:j].
	pre := make([][]bool, len(want)+1)
	for i := range pre {
		pre[i] = make([]bool, len(got)+1)
	}
	pre[0][0] = true
	reached := 0
	for i, w := range want {
		switch {
		case strings.TrimSpace(w) == ellipsis:
			any := false
			for j := 0; j <= len(got); j++ {
				any = any || pre[i][j]
				pre[i+1][j] = any
			}
		case strings.Contains(w, ellipsis):
			re := lineRE(w)
			for j, g := range got {
				pre[i+1][j+1] = pre[i][j] && re.MatchString(g)
			}
		default:
			for j, g := range got {
				pre[i+1][j+1] = pre[i][j] && w == g
			}
		}
		if slices.Contains(pre[i+1], true) {
			reached = i + 1
		}
	}
	if pre[len(want)][len(got)] {
		return true, -1
	}
	return false, reached
}

func TestMatchLetsMarkedTextVary(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, got string
		ok        bool
	}{
		{"equal", "a\nb", "a\nb", true},
		{"a line differs", "a\nb", "a\nc", false},
		{"a line more", "a\nb", "a\nb\nc", false},
		{"a line less", "a\nb", "a", false},
		{"trailing spaces and blank lines", "a  \nb\n\n", "a\nb   \n", true},
		{"text in a line", "took … s", "took 1.5 s", true},
		{"an empty stretch", "took … s", "took s", true},
		{"spaces around …", "1.016          …   98.0%", "1.016          12.57 M   98.0%", true},
		{"spaces around … are one or more", "1.016          …         98.0%", "1.016  9.5 M 98.0%", true},
		{"spaces around … are not none", "… %", "5%", false},
		{"text around … still counts", "took … s", "took 1.5 ms", false},
		{"lines", "a\n…\nd", "a\nb\nc\nd", true},
		{"no lines", "a\n…\nd", "a\nd", true},
		{"lines, then a difference", "a\n…\nd", "a\nb\ne", false},
		{"leading and trailing lines", "…\nc\n…", "a\nb\nc\nd", true},
		{"a literal … matches itself", "[0 0 … 0 0]", "[0 0 … 0 0]", true},
		{"regexp characters are text", "a.b (c)*", "axb (c)*", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, _ := match(strings.Split(tc.want, "\n"), strings.Split(tc.got, "\n"))
			assert.Equal(t, tc.ok, ok)
		})
	}
}

// TestDocsShowExampleOutputs compares blocks marked with an Example with
// the Example's "// Output:" comment, which go test checks against the
// Example's real output.
func TestDocsShowExampleOutputs(t *testing.T) {
	checked := 0
	for _, p := range pages(t) {
		for _, b := range p.blocks {
			if b.marker == nil || b.marker.kind != "example" {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d", p.file, b.line)
			out, err := exampleOutput(filepath.Join(root, b.marker.dir), b.marker.name)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if ok, line := match(b.body, strings.Split(out, "\n")); !ok {
				t.Errorf("%s: the block differs from %s's // Output: at its line %d:\n%s\n--- // Output:\n%s", where, b.marker.name, line+1, strings.Join(b.body, "\n"), out)
			}
		}
	}
	assert.NotZero(t, checked, "no block marked with an Example")
}

// exampleOutput returns the "// Output:" comment of the Example named name
// in dir's test files.
func exampleOutput(dir, name string) (string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return "", err
	}
	var parsed []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return "", err
		}
		parsed = append(parsed, af)
	}
	for _, ex := range doc.Examples(parsed...) {
		if "Example"+ex.Name != name {
			continue
		}
		if ex.Output == "" || ex.Unordered {
			return "", fmt.Errorf("%s in %s has no ordered // Output: comment", name, dir)
		}
		return ex.Output, nil
	}
	return "", fmt.Errorf("no %s in %s's tests", name, dir)
}

// TestDocsShowSourcesAsTheyAre compares blocks marked with a source file
// (source: PATH, program: NAME (PATH)) with the file.
func TestDocsShowSourcesAsTheyAre(t *testing.T) {
	for _, p := range pages(t) {
		for _, b := range p.blocks {
			if b.marker == nil || b.marker.path == "" {
				continue
			}
			src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(b.marker.path)))
			if !assert.NoError(t, err, "%s:%d", p.file, b.line) {
				continue
			}
			assert.Equal(t, strings.TrimRight(string(src), "\n"), strings.Join(b.body, "\n"),
				"%s:%d: the block is not %s as it is", p.file, b.line, b.marker.path)
		}
	}
}

// A pkg is what a package of the module declares.
type pkg struct {
	dir     string
	names   map[string]bool            // exported top-level names
	members map[string]map[string]bool // type -> its methods and fields
	embeds  map[string][]string        // type -> the types it embeds
	types   map[string]bool
}

// packages parses the module's public packages (not internal, not main, not
// testdata), by package name. Their test files count: the pages name tests,
// benchmarks and what export_test.go files declare.
func packages(t *testing.T) map[string][]*pkg {
	t.Helper()
	byName := map[string][]*pkg{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		base := d.Name()
		if p != root && (strings.HasPrefix(base, ".") || base == "testdata" || base == "internal") {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(p, "*.go"))
		if err != nil {
			return err
		}
		pk := &pkg{dir: p, names: map[string]bool{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}, types: map[string]bool{}}
		name := ""
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			name = strings.TrimSuffix(af.Name.Name, "_test")
			pk.add(af)
		}
		if name != "" && name != "main" {
			byName[name] = append(byName[name], pk)
		}
		return nil
	})
	require.NoError(t, err)
	return byName
}

// add records a file's declarations.
func (pk *pkg) add(f *ast.File) {
	member := func(typ, name string) {
		if pk.members[typ] == nil {
			pk.members[typ] = map[string]bool{}
		}
		pk.members[typ][name] = true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				pk.names[d.Name.Name] = true
				continue
			}
			member(typeName(d.Recv.List[0].Type), d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					pk.names[s.Name.Name] = true
					pk.types[s.Name.Name] = true
					var fields *ast.FieldList
					switch ty := s.Type.(type) {
					case *ast.StructType:
						fields = ty.Fields
					case *ast.InterfaceType:
						fields = ty.Methods
					}
					if fields == nil {
						continue
					}
					for _, fl := range fields.List {
						if len(fl.Names) == 0 {
							pk.embeds[s.Name.Name] = append(pk.embeds[s.Name.Name], typeName(fl.Type))
						}
						for _, n := range fl.Names {
							member(s.Name.Name, n.Name)
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						pk.names[n.Name] = true
					}
				}
			}
		}
	}
}

// typeName is the name of a receiver's or embedded field's type: T for
// T, *T, T[P] and *T[P]; pkg.T for another package's.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return typeName(e.X) + "." + e.Sel.Name
	}
	return "?"
}

// hasMember reports whether typ has the method or field name, through the
// types it embeds; a type that embeds another package's type may have it.
func (pk *pkg) hasMember(typ, name string, seen map[string]bool) bool {
	if pk.members[typ][name] {
		return true
	}
	if seen[typ] {
		return false
	}
	seen[typ] = true
	for _, e := range pk.embeds[typ] {
		if strings.Contains(e, ".") || pk.hasMember(e, name, seen) {
			return true
		}
	}
	return false
}

// spans returns a page's inline code spans, a span's lines joined, but
// not those struck out (~~`memprof.Handler`~~): names that are gone.
func (p *page) spans() []string {
	var out []string
	for _, m := range spanRE.FindAllStringSubmatch(struckRE.ReplaceAllString(p.prose, ""), -1) {
		out = append(out, strings.Join(strings.Fields(m[2]), " "))
	}
	return out
}

// named returns what a page names in code: its spans and the lines of its
// code blocks (not those of output), each with where it is.
func (p *page) named() map[string][]string {
	out := map[string][]string{}
	for _, s := range p.spans() {
		out[s] = append(out[s], p.file)
	}
	for _, b := range p.blocks {
		if outputLike[b.info] {
			continue
		}
		for i, l := range b.body {
			out[l] = append(out[l], fmt.Sprintf("%s:%d", p.file, b.line+1+i))
		}
	}
	return out
}

// TestDocsNameIdentifiersThatExist checks every pkg.Name and
// pkg.Type.Member the pages name in code, for the module's packages.
func TestDocsNameIdentifiersThatExist(t *testing.T) {
	byName := packages(t)
	checked := 0
	for _, p := range pages(t) {
		for text, where := range p.named() {
			for _, m := range selectorRE.FindAllStringSubmatch(text, -1) {
				pks, name, member := byName[m[2]], m[3], m[4]
				if pks == nil {
					continue
				}
				checked++
				found := false
				for _, pk := range pks {
					if pk.names[name] && (member == "" || !pk.types[name] || pk.hasMember(name, member, map[string]bool{})) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: %s names %s.%s%s, which package %s does not declare", where[0], text, m[2], name, strings.TrimSuffix("."+member, "."), m[2])
				}
			}
		}
	}
	assert.Greater(t, checked, 100, "too few identifiers found: is the pattern right?")
}

// gocudaCommands returns cmd/gocuda's commands and flags, from its source.
func gocudaCommands(t *testing.T) (cmds, flags map[string]bool) {
	t.Helper()
	cmds, flags = map[string]bool{"help": true}, map[string]bool{"h": true, "help": true}
	files, err := filepath.Glob(filepath.Join(root, "cmd", "gocuda", "*.go"))
	require.NoError(t, err)
	flagFuncs := regexp.MustCompile(`^(Bool|Int|Int64|Uint|Uint64|String|Float64|Duration|Func|Var|TextVar)(Var)?$`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Name.Name == "commands" && n.Recv == nil {
					ast.Inspect(n.Body, func(n ast.Node) bool {
						if kv, ok := n.(*ast.KeyValueExpr); ok {
							if s, ok := stringLit(kv.Key); ok {
								cmds[s] = true
							}
						}
						return true
					})
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || !flagFuncs.MatchString(sel.Sel.Name) || len(n.Args) < 2 {
					return true
				}
				arg := n.Args[0] // fs.Int("name", ...)
				if strings.HasSuffix(sel.Sel.Name, "Var") {
					arg = n.Args[1] // fs.IntVar(&v, "name", ...), fs.Var(v, "name", ...)
				}
				if s, ok := stringLit(arg); ok {
					flags[s] = true
				}
			}
			return true
		})
	}
	require.Contains(t, cmds, "doctor", "cmd/gocuda's commands() was not found")
	require.Contains(t, flags, "warmup", "cmd/gocuda's flags were not found")
	return cmds, flags
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// TestDocsNameGocudaCommandsThatExist checks every "gocuda COMMAND --flag"
// the pages name in code.
func TestDocsNameGocudaCommandsThatExist(t *testing.T) {
	cmds, flags := gocudaCommands(t)
	checked := 0
	for _, p := range pages(t) {
		for text, where := range p.named() {
			for _, m := range gocudaRE.FindAllStringSubmatch(text, -1) {
				words := strings.Fields(m[1])
				if len(words) == 0 || !strings.HasPrefix(words[0], "-") && !nameRE.MatchString(words[0]) {
					continue // gocuda (the package), gocuda COMMAND
				}
				checked++
				if !strings.HasPrefix(words[0], "-") && !cmds[words[0]] {
					t.Errorf("%s: %s: gocuda has no command %q", where[0], text, words[0])
				}
				for _, w := range words {
					if w == "--" {
						break // the program's own flags follow
					}
					f, ok := strings.CutPrefix(w, "-")
					if !ok {
						continue
					}
					f, _, _ = strings.Cut(strings.TrimPrefix(f, "-"), "=")
					f = strings.TrimRight(f, ".,)`")
					if f != "" && !flags[f] {
						t.Errorf("%s: %s: no gocuda command has the flag %q", where[0], text, w)
					}
				}
			}
		}
	}
	assert.Greater(t, checked, 10, "too few gocuda commands found: is the pattern right?")
}

// TestDocsNamePathsThatExist checks every path into the repository that
// the pages name: examples/basic, ./cmd/gocuda, scripts/gpu-build.sh.
func TestDocsNamePathsThatExist(t *testing.T) {
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	var top []string
	for _, e := range entries {
		// Not testdata: the pages name packages' own testdata folders.
		if !strings.HasPrefix(e.Name(), ".") && e.IsDir() && e.Name() != "testdata" {
			top = append(top, regexp.QuoteMeta(e.Name()))
		}
	}
	pathRE := regexp.MustCompile(`(?:^|[\s(\x60'"=])(?:\./)?((?:` + strings.Join(top, "|") + `)/[\w./-]*)`)
	checked := 0
	for _, p := range pages(t) {
		texts := []string{p.prose}
		for _, b := range p.blocks {
			if !outputLike[b.info] && (b.marker == nil || b.marker.kind != "program") {
				texts = append(texts, strings.Join(b.body, "\n"))
			}
		}
		for _, text := range texts {
			for _, m := range pathRE.FindAllStringSubmatch(text, -1) {
				rel := strings.TrimSuffix(strings.TrimRight(m[1], ".,:"), "/...")
				checked++
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					t.Errorf("%s names %s, which is not in the repository", p.file, m[1])
				}
			}
		}
	}
	assert.Greater(t, checked, 50, "too few paths found: is the pattern right?")
}

// The runs below need the go command, linux/amd64 and no GPU: the pages
// show the host backend's output on the build machine.
func needRuns(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds and runs the programs of the pages")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command (%v): the GPU machines have no toolchain; this runs where the tests are built", err)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the pages show output on linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if n, err := cuda.DeviceCount(); err == nil && n > 0 {
		t.Skip("this machine has a GPU: the pages show the host backend's output")
	}
	return goTool
}

// env is the test's environment without GOCUDA_ variables, with add.
func env(add ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOCUDA_") {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

// runIn runs a command in dir and returns its stdout and stderr together.
func runIn(ctx context.Context, dir string, environ []string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, environ
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// A build is a main package to build: of the scratch module (a page's
// program) or of the repository, with cgo or without.
type build struct {
	scratch bool
	pkg     string // ./examples/basic, ./leaks
	cgo     string // "" or CGO_ENABLED's value
}

// A run is a command of a page and the lines it should print.
type run struct {
	where   string
	command string
	env     []string
	b       build // for go run and gocuda
	args    []string
	argv    []string // for go tool pprof
	want    []string
}

// runsOf returns a page's commands, in order.
func runsOf(p *page) ([]run, []string) {
	programs := map[string]bool{}
	for _, b := range p.blocks {
		if b.marker != nil && b.marker.kind == "program" {
			programs[b.marker.name] = true
		}
	}
	var runs []run
	var problems []string
	add := func(where, command string, want []string) {
		envs, words, err := splitCommand(command)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			return
		}
		r := run{where: where, command: command, env: envs, want: want}
		for _, e := range envs {
			if v, ok := strings.CutPrefix(e, "CGO_ENABLED="); ok {
				r.b.cgo = v
			}
		}
		switch words[0] {
		case "gocuda":
			r.b.pkg, r.args = "./cmd/gocuda", words[1:]
		case "go":
			if words[1] == "tool" {
				r.argv = words
				break
			}
			name := path.Clean(words[2])
			r.b.scratch, r.b.pkg, r.args = programs[name], "./"+name, words[3:]
			if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); !r.b.scratch && (err != nil || !st.IsDir()) {
				problems = append(problems, fmt.Sprintf("%s: %s: %s is neither a program of the page nor a folder of the repository", where, command, words[2]))
				return
			}
		}
		runs = append(runs, r)
	}
	for _, b := range p.blocks {
		if b.marker == nil {
			continue
		}
		where := fmt.Sprintf("%s:%d", p.file, b.line)
		switch b.marker.kind {
		case "output":
			add(where, b.marker.command, b.body)
		case "transcript":
			for i := 0; i < len(b.body); {
				c := strings.TrimPrefix(b.body[i], "$ ")
				j := i + 1
				for j < len(b.body) && !strings.HasPrefix(b.body[j], "$ ") {
					j++
				}
				add(fmt.Sprintf("%s:%d", p.file, b.line+1+i), c, b.body[i+1:j])
				i = j
			}
		}
	}
	return runs, problems
}

// programsOf returns a page's programs, by name, and the line of each.
func programsOf(p *page) (map[string]string, map[string]int) {
	src, line := map[string]string{}, map[string]int{}
	for _, b := range p.blocks {
		if b.marker != nil && b.marker.kind == "program" {
			src[b.marker.name] = strings.Join(b.body, "\n") + "\n"
			line[b.marker.name] = b.line
		}
	}
	return src, line
}

// TestDocsShowWhatTheProgramsPrint builds every program the pages run,
// runs each command on its page, in order, and compares what it prints
// with the page.
func TestDocsShowWhatTheProgramsPrint(t *testing.T) {
	goTool := needRuns(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	checkout, err := filepath.Abs(root)
	require.NoError(t, err)
	tmp := t.TempDir()

	type pageRuns struct {
		p    *page
		runs []run
	}
	var all []pageRuns
	programs := map[string]string{} // the scratch module's, from every page
	builds := map[build]bool{}
	for _, p := range pages(t) {
		runs, problems := runsOf(p)
		for _, pr := range problems {
			t.Error(pr)
		}
		src, line := programsOf(p)
		for name, s := range src {
			if old, ok := programs[name]; ok && old != s {
				t.Errorf("%s:%d: another page has a different program %s", p.file, line[name], name)
			}
			programs[name] = s
		}
		for _, r := range runs {
			if r.b.pkg != "" {
				builds[r.b] = true
			}
		}
		all = append(all, pageRuns{p, runs})
	}
	require.False(t, t.Failed())

	// The scratch module, as getting-started's install steps make it.
	scratch := filepath.Join(tmp, "gs")
	require.NoError(t, os.Mkdir(scratch, 0o755))
	goEnv := env("GOWORK=off")
	for _, args := range [][]string{
		{"mod", "init", "example.com/gs"},
		{"mod", "edit", "-require=" + module + "@v0.0.0", "-replace=" + module + "=" + checkout},
	} {
		out, err := runIn(ctx, scratch, goEnv, append([]string{goTool}, args...)...)
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	}
	for name, s := range programs {
		require.NoError(t, os.Mkdir(filepath.Join(scratch, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(scratch, name, "main.go"), []byte(s), 0o644))
	}
	out, err := runIn(ctx, scratch, goEnv, goTool, "mod", "tidy")
	if err != nil && networkTrouble.MatchString(out) {
		t.Skipf("go mod tidy in the scratch module: the module proxy cannot be reached, and the module cache lacks what gocuda requires:\n%s", out)
	}
	require.NoError(t, err, "go mod tidy in the scratch module:\n%s", out)

	// One go build per module and cgo setting, of all its programs.
	type group struct {
		scratch bool
		cgo     string
	}
	pkgs := map[group][]string{}
	for b := range builds {
		g := group{b.scratch, b.cgo}
		pkgs[g] = append(pkgs[g], b.pkg)
	}
	bins := map[build]string{}
	for g, list := range pkgs {
		sort.Strings(list)
		dir := filepath.Join(tmp, fmt.Sprintf("bin-%t-%s", g.scratch, g.cgo))
		src := checkout
		if g.scratch {
			src = scratch
		}
		e := slices.Clone(goEnv)
		if g.cgo != "" {
			e = append(e, "CGO_ENABLED="+g.cgo)
		}
		out, err := runIn(ctx, src, e, append([]string{goTool, "build", "-o", dir + string(os.PathSeparator)}, list...)...)
		require.NoError(t, err, "go build %s:\n%s", strings.Join(list, " "), out)
		for _, pk := range list {
			bins[build{g.scratch, pk, g.cgo}] = filepath.Join(dir, path.Base(pk))
		}
	}

	top, err := os.ReadDir(checkout)
	require.NoError(t, err)
	for _, pr := range all {
		if len(pr.runs) == 0 {
			continue
		}
		// A folder of the page's own that sees the repository's files.
		work := filepath.Join(tmp, "work-"+strings.NewReplacer("/", "-", ".md", "").Replace(pr.p.file))
		require.NoError(t, os.MkdirAll(filepath.Join(work, "docs", "img"), 0o755))
		for _, e := range top {
			if e.Name() != "docs" && e.Name() != ".git" {
				require.NoError(t, os.Symlink(filepath.Join(checkout, e.Name()), filepath.Join(work, e.Name())))
			}
		}
		for _, r := range pr.runs {
			argv := r.argv
			if argv == nil {
				argv = append([]string{bins[r.b]}, r.args...)
			} else {
				argv = append([]string{goTool}, argv[1:]...)
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			got, err := runIn(cctx, work, env(r.env...), argv...)
			timedOut := cctx.Err() != nil
			cancel()
			var exit *exec.ExitError // a nonzero exit is output like any other
			if timedOut || err != nil && !errors.As(err, &exit) {
				t.Errorf("%s: %s: %v\n%s", r.where, r.command, err, got)
				continue
			}
			if ok, line := match(r.want, strings.Split(got, "\n")); !ok {
				t.Errorf("%s: %s prints other than the page shows, from the page's line %q on.\n--- the page:\n%s\n--- the output:\n%s",
					r.where, r.command, lineAt(r.want, line), strings.Join(r.want, "\n"), got)
			}
		}
	}
}

func lineAt(lines []string, i int) string {
	if i < 0 || i >= len(lines) {
		return "(the end)"
	}
	return lines[i]
}

// networkTrouble matches the go command's words for a module proxy it
// cannot reach or may not use.
var networkTrouble = regexp.MustCompile(`GOPROXY=off|GOFLAGS=-mod=vendor|dial tcp|no such host|connection refused|i/o timeout|TLS handshake|proxyconnect|network is unreachable|module lookup disabled`)

// TestGettingStartedInstallStepsWork types docs/getting-started.md's
// install steps into an empty folder, one line at a time, with the clone
// made a link to this checkout, then runs the page's go run lines and
// compares what they print with the page.
func TestGettingStartedInstallStepsWork(t *testing.T) {
	needRuns(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh: %v", err)
	}
	checkout, err := filepath.Abs(root)
	require.NoError(t, err)
	var p *page
	for _, pg := range pages(t) {
		if pg.file == "docs/getting-started.md" {
			p = pg
		}
	}
	require.NotNil(t, p)
	outputs := map[string][]string{}
	for _, b := range p.blocks {
		if b.marker != nil && b.marker.kind == "output" {
			outputs[b.marker.command] = b.body
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	environ := env("GOWORK=off")
	saved := map[string]bool{}
	steps, runs := 0, 0
	for _, b := range p.blocks {
		if b.marker == nil || b.marker.kind != "install" {
			continue
		}
		// The programs shown above this block, saved where the user is.
		for _, pb := range p.blocks {
			if pb.line > b.line {
				break
			}
			if m := pb.marker; m != nil && m.kind == "program" && !saved[m.name] {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, m.name), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, m.name, "main.go"), []byte(strings.Join(pb.body, "\n")+"\n"), 0o644))
				saved[m.name] = true
			}
		}
		for i, line := range b.body {
			where := fmt.Sprintf("%s:%d", p.file, b.line+1+i)
			line, _, _ = strings.Cut(line, "#")
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			steps++
			words := strings.Fields(line)
			switch {
			case words[0] == "cd" && len(words) == 2:
				dir = filepath.Join(dir, words[1])
				continue
			case len(words) >= 3 && words[0] == "git" && words[1] == "clone" && strings.TrimSuffix(words[2], ".git") == "https://"+module:
				to := "gocuda"
				if len(words) > 3 {
					to = words[3]
				}
				require.NoError(t, os.Symlink(checkout, filepath.Join(dir, to)), "%s: %s", where, line)
				continue
			}
			cmd := exec.CommandContext(ctx, sh, "-c", line)
			cmd.Dir, cmd.Env = dir, environ
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if err != nil && networkTrouble.MatchString(stderr.String()) {
				t.Skipf("%s: %s: the module proxy cannot be reached, and the module cache lacks what gocuda requires:\n%s", where, line, stderr.String())
			}
			require.NoError(t, err, "%s: %s\n%s%s", where, line, stdout.String(), stderr.String())
			if want, ok := outputs[line]; ok && strings.HasPrefix(line, "go run ") {
				runs++
				if ok, at := match(want, strings.Split(stdout.String(), "\n")); !ok {
					t.Errorf("%s: %s prints other than the page shows, from the page's line %q on.\n--- the page:\n%s\n--- the output:\n%s",
						where, line, lineAt(want, at), strings.Join(want, "\n"), stdout.String())
				}
			}
		}
	}
	assert.NotZero(t, steps, "getting-started has no install block")
	assert.NotZero(t, runs, "the install steps run no program whose output the page shows")
	assert.True(t, slices.ContainsFunc(p.blocks, func(b *block) bool { return b.marker != nil && b.marker.kind == "program" }))
}
