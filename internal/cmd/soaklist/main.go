// Command soaklist prints, for each package of the module whose tests run
// longer without -short, that package and a -run pattern naming exactly
// those tests: the top-level Test functions that reach testing.Short,
// directly or through functions of their own package (a soak count, a
// trial count). CI's long soaks run only these without -short, since every
// other test does the same with and without it and the README's command
// has already run it.
//
// Usage: go run ./internal/cmd/soaklist [-unraced] [DIR]  (DIR: the module
// root, ".")
//
// With -unraced it names only those of them that a race-built run without
// -short does not run in full: the tests that also reach the identifier
// raceBuild (the black-box suite's mark that its agent was built with
// -race, which such a test reads to do less or to skip). CI's race passes
// run every package without -short, so every other soak has run in full
// there already.
//
// Each line is "PACKAGE-DIR PATTERN". Calls are matched by name within a
// package (a function or a method of that name), which can only name more
// tests than reach testing.Short (or raceBuild), never fewer.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// raceMark is the identifier a test reads when it does less in a
// race-built run.
const raceMark = "raceBuild"

func main() {
	unraced := flag.Bool("unraced", false, "only the soaks that a race-built run does not run in full (those that reach "+raceMark+")")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	dirs, err := testDirs(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soaklist:", err)
		os.Exit(1)
	}
	for _, dir := range dirs {
		tests, err := shortTests(dir, *unraced)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soaklist:", err)
			os.Exit(1)
		}
		if len(tests) > 0 {
			fmt.Printf("./%s ^(%s)$\n", filepath.ToSlash(dir), strings.Join(tests, "|"))
		}
	}
}

// testDirs lists the directories below root that hold _test.go files,
// leaving out what go's ./... leaves out (names starting with . or _,
// testdata) and nested modules.
func testDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") {
			dir, _ := filepath.Rel(root, filepath.Dir(path))
			if len(dirs) == 0 || dirs[len(dirs)-1] != dir {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	return slices.Compact(dirs), err
}

// shortTests returns the Test functions of dir's test files that reach
// testing.Short; with unraced, only those that also reach raceMark.
func shortTests(dir string, unraced bool) ([]string, error) {
	calls := map[string]map[string]bool{} // function name -> names it calls
	short := map[string]bool{}            // functions that call testing.Short
	raced := map[string]bool{}            // functions that read raceMark
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			called := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == raceMark {
					raced[fn.Name.Name] = true
				}
				if c, ok := n.(*ast.CallExpr); ok {
					switch fun := c.Fun.(type) {
					case *ast.Ident:
						called[fun.Name] = true
					case *ast.SelectorExpr:
						if x, ok := fun.X.(*ast.Ident); ok && x.Name == "testing" && fun.Sel.Name == "Short" {
							short[fn.Name.Name] = true
						}
						called[fun.Sel.Name] = true
					}
				}
				return true
			})
			calls[fn.Name.Name] = merge(calls[fn.Name.Name], called)
		}
	}
	reach(calls, short)
	reach(calls, raced)
	var tests []string
	for name := range short {
		if unraced && !raced[name] {
			continue
		}
		if strings.HasPrefix(name, "Test") && name != "TestMain" {
			tests = append(tests, name)
		}
	}
	slices.Sort(tests)
	return tests, nil
}

// reach marks, in marked, every function that calls one already marked,
// until nothing changes.
func reach(calls map[string]map[string]bool, marked map[string]bool) {
	for changed := true; changed; {
		changed = false
		for fn, called := range calls {
			if marked[fn] {
				continue
			}
			for c := range called {
				if marked[c] {
					marked[fn], changed = true, true
					break
				}
			}
		}
	}
}

func merge(a, b map[string]bool) map[string]bool {
	if a == nil {
		return b
	}
	for k := range b {
		a[k] = true
	}
	return a
}
