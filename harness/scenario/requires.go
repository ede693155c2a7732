package scenario

import (
	"slices"
	"sort"

	"github.com/oplogha/oplogha/harness/masterkind"
)

// Requires is every capability the scenario needs of its master: what its
// `requires:` declares and what its content implies (a snapshot store, the
// project's config keys, a failpoint and its term's form, a wait for a
// cursor, a metric), sorted. What only an audit reads (expect's recovery
// sources, a node's state) is no requirement: that audit is skipped, with
// the reason, on a master that does not expose it, and the run goes on. A run against a master that lacks one is
// skipped with the reason (masterkind.Kind.SkipReason).
func (sc *Scenario) Requires() []masterkind.Capability {
	var need []masterkind.Capability
	add := func(c masterkind.Capability) {
		if !slices.Contains(need, c) {
			need = append(need, c)
		}
	}
	for _, r := range sc.Require {
		add(masterkind.Capability(r))
	}
	c := sc.Cluster
	if c.S3 != "" {
		add(masterkind.Snapshots)
	}
	if len(c.Config) > 0 {
		add(masterkind.ProjectConfig)
	}
	if c.LegacyImport != nil {
		add(masterkind.LegacyImport)
	}
	if c.Security.TLS || c.Security.Auth {
		add(masterkind.Security)
	}
	if sc.Runtime == "docker" {
		add(masterkind.Containers)
	}
	if len(c.BuildTags) > 0 {
		add(masterkind.BuildTags)
	}
	failpoint := func(name, term string) {
		add(masterkind.FailpointCap(name))
		add(masterkind.TermCap(masterkind.TermForm(term)))
	}
	for name, term := range c.Failpoints {
		failpoint(name, term)
	}
	for _, s := range sc.Steps {
		switch {
		case s.Fault != nil && s.Fault.Kind == "failpoint":
			failpoint(s.Fault.Name, s.Fault.Term)
		case s.Wait != nil:
			switch s.Wait.For {
			case "caught-up":
				add(masterkind.Cursor)
			case "snapshots", "pruned", "maintenance":
				add(masterkind.Snapshots)
			case "metric":
				add(masterkind.ProjectMetrics)
			}
		case s.Restart != nil && len(s.Restart.Config) > 0:
			add(masterkind.ProjectConfig)
		case s.Assert != nil:
			a := s.Assert
			if len(a.BootstrapSource) > 0 {
				add(masterkind.BootstrapReport)
			}
			if a.Metric != nil {
				add(masterkind.ProjectMetrics)
			}
			if a.Refuses != nil {
				add(masterkind.ProjectConfig)
			}
			if a.NoSnapshotsFor > 0 || (a.Oplog != nil && (a.Oplog.FloorMin > 0 || a.Oplog.BelowFloor != nil)) {
				add(masterkind.Snapshots)
			}
		}
	}
	sort.Slice(need, func(i, j int) bool { return need[i] < need[j] })
	return need
}
