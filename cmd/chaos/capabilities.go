package main

import (
	"fmt"
	"github.com/oplogha/oplogha/faults"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/swarm"
)

// printCapabilities lists each master kind with what it has and the
// swarm moves it can take, then each scenario with what it requires and, per kind, run or the skip reason.
func printCapabilities(scs []*scenario.Scenario) {
	kinds := []masterkind.Kind{masterkind.Reference(), masterkind.Mooncake()}
	for _, k := range kinds {
		fmt.Printf("%s: %s\n", k.Name, k.Doc)
		var has []string
		for _, c := range k.Has {
			has = append(has, string(c))
		}
		if k.AnyFailpoint {
			has = append(has, "failpoint:* (every failpoint name)")
		}
		var fps []string
		for ours, theirs := range k.Failpoints {
			fps = append(fps, fmt.Sprintf("failpoint:%s (upstream's %s)", ours, theirs))
		}
		sort.Strings(fps)
		has = append(has, fps...)
		fmt.Printf("  has: %s\n", strings.Join(has, ", "))
		fmt.Printf("  swarm moves (chaos swarm --master %s): %s\n", k.Name, strings.Join(swarm.Menu(k), ", "))
	}
	fmt.Println()
	fmt.Println("fault kinds that do not apply to every cluster:")
	full := faults.Shape{Etcd: 3, Masters: 3, Snapshots: true, Retention: true, StoreFiles: true, PeerPairs: true}
	clusters := []struct {
		name string
		sh   faults.Shape
	}{
		{"process runtime", full},
		{"docker runtime", func() faults.Shape { sh := full; sh.Docker = true; return sh }()},
		{"peer TLS (smoke-secure)", func() faults.Shape { sh := full; sh.PeerPairs = false; return sh }()},
	}
	for _, k := range faults.Kinds() {
		var not []string
		for _, c := range clusters {
			if err := k.Available(c.sh); err != nil {
				not = append(not, c.name)
			}
		}
		if len(not) > 0 && len(not) < len(clusters) {
			fmt.Printf("  %-16s not on: %s\n", k.Name, strings.Join(not, ", "))
		}
	}
	fmt.Println()
	for _, sc := range scs {
		var need []string
		for _, c := range sc.Requires() {
			need = append(need, string(c))
		}
		fmt.Printf("%-13s %-30s requires: %s\n", sc.Tier, sc.Name, strings.Join(need, ", "))
		for _, k := range kinds {
			verdict := "runs"
			if why := k.SkipReason(sc.Requires()); why != "" {
				verdict = "skipped: " + why
			}
			fmt.Printf("%-13s %-30s   %-9s %s\n", "", "", k.Name, verdict)
		}
	}
}
