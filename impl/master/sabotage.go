//go:build sabotage

package master

import gofail "go.etcd.io/gofail/runtime"

// A master built with the sabotage tag (a harness-test scenario's
// build_tags) has failpoints that break it on purpose, to prove the audits
// fail on a broken build. No release build compiles them in.
var fpBrokenAckWithoutAppend = gofail.NewFailpoint("brokenAckWithoutAppend")

func init() {
	Failpoints = append(Failpoints, FailpointInfo{fpBrokenAckWithoutAppend, "brokenAckWithoutAppend",
		"SABOTAGE (sabotage builds only): with return(true) the primary acknowledges a batch without making it durable"})
}

// sabotageAckWithoutAppend reports whether the primary should acknowledge
// the next batch without appending it.
func sabotageAckWithoutAppend() bool { return hit(fpBrokenAckWithoutAppend) }
