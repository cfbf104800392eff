//go:build mutants

package scenarios_test

// Mutation testing of the matrix (mutants/REPORT.md). Built only with
// -tags mutants:
//
//	go test -tags mutants ./scenarios -run '^TestMutants$' -v
//
// MUTANTS=a,b limits the run to those mutants; MUTANTS_OUT=file appends one
// line per cell as it finishes.

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"idemlab/lab"
	"idemlab/mutants/accountonly"
	"idemlab/mutants/alwaysapplied"
	"idemlab/mutants/amountcapdown"
	"idemlab/mutants/amountcapup"
	"idemlab/mutants/amountonly"
	"idemlab/mutants/amountzero"
	"idemlab/mutants/andconflict"
	"idemlab/mutants/balancecapdown"
	"idemlab/mutants/balancecapup"
	"idemlab/mutants/begin"
	"idemlab/mutants/busy0"
	"idemlab/mutants/commitignored"
	"idemlab/mutants/conflictnowrap"
	"idemlab/mutants/crossfield"
	"idemlab/mutants/debit"
	"idemlab/mutants/defercommit"
	"idemlab/mutants/dupbegin"
	"idemlab/mutants/dupcommit"
	"idemlab/mutants/dupinsert"
	"idemlab/mutants/dupinvalid"
	"idemlab/mutants/duplookup"
	"idemlab/mutants/gezero"
	"idemlab/mutants/idge"
	"idemlab/mutants/keylen0"
	"idemlab/mutants/keylen127"
	"idemlab/mutants/lookupnosource"
	"idemlab/mutants/lookupswap"
	"idemlab/mutants/nezero"
	"idemlab/mutants/noclassbegin"
	"idemlab/mutants/noclasscommit"
	"idemlab/mutants/noclassinsert"
	"idemlab/mutants/noclasslookup"
	"idemlab/mutants/noclassupdate"
	"idemlab/mutants/nofkdsn"
	"idemlab/mutants/noreferences"
	"idemlab/mutants/norollback"
	"idemlab/mutants/nostrict"
	"idemlab/mutants/notarget"
	"idemlab/mutants/notxlock"
	"idemlab/mutants/novalidate"
	"idemlab/mutants/rowsignored"
	"idemlab/mutants/sourcenull"
	"idemlab/mutants/swapargs"
	"idemlab/mutants/uniquekey"
	"idemlab/mutants/wrongid"
	"idemlab/scenarios"
)

var mutants = []lab.Variant{
	accountonly.Variant,
	alwaysapplied.Variant,
	amountcapdown.Variant,
	amountcapup.Variant,
	amountonly.Variant,
	amountzero.Variant,
	andconflict.Variant,
	balancecapdown.Variant,
	balancecapup.Variant,
	begin.Variant,
	busy0.Variant,
	commitignored.Variant,
	conflictnowrap.Variant,
	crossfield.Variant,
	debit.Variant,
	defercommit.Variant,
	dupbegin.Variant,
	dupcommit.Variant,
	dupinsert.Variant,
	dupinvalid.Variant,
	duplookup.Variant,
	gezero.Variant,
	idge.Variant,
	keylen0.Variant,
	keylen127.Variant,
	lookupnosource.Variant,
	lookupswap.Variant,
	nezero.Variant,
	noclassbegin.Variant,
	noclasscommit.Variant,
	noclassinsert.Variant,
	noclasslookup.Variant,
	noclassupdate.Variant,
	nofkdsn.Variant,
	noreferences.Variant,
	norollback.Variant,
	nostrict.Variant,
	notarget.Variant,
	notxlock.Variant,
	novalidate.Variant,
	rowsignored.Variant,
	sourcenull.Variant,
	swapargs.Variant,
	uniquekey.Variant,
	wrongid.Variant,
}

// The crash child finds its variant in variants.
func init() { variants = append(variants, mutants...) }

func TestMutants(t *testing.T) {
	only := map[string]bool{}
	if s := os.Getenv("MUTANTS"); s != "" {
		for _, n := range strings.Split(s, ",") {
			only["mutants/"+n] = true
		}
	}
	var out *os.File
	if p := os.Getenv("MUTANTS_OUT"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	var mu sync.Mutex
	killed := map[string][]string{}
	t.Run("cells", func(t *testing.T) {
		for _, v := range mutants {
			if len(only) > 0 && !only[v.Name] {
				continue
			}
			for _, sc := range scenarios.All {
				if sc.Limit != "" {
					continue
				}
				t.Run(sc.Name+"/"+v.Name, func(t *testing.T) {
					t.Parallel()
					cell := lab.RunCell(t, sc, v)
					mu.Lock()
					defer mu.Unlock()
					verdict := "survives"
					if !cell.Pass {
						verdict = "KILLS"
						killed[v.Name] = append(killed[v.Name], sc.Name)
					}
					line := fmt.Sprintf("%s\t%s\t%s\t%s\n", v.Name, sc.Name, verdict, strings.ReplaceAll(cell.Detail, "\n", " "))
					if out != nil {
						out.WriteString(line)
					}
				})
			}
		}
	})
	for _, v := range mutants {
		if len(only) > 0 && !only[v.Name] {
			continue
		}
		k := killed[v.Name]
		slices.Sort(k)
		t.Logf("%-26s %s", v.Name, strings.Join(k, " "))
	}
}
