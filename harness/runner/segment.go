package runner

import "github.com/oplogha/oplogha/harness/client"

func segment(endpoint string, i int) client.Segment {
	return client.Segment{Endpoint: endpoint, Name: "segment-" + string(rune('a'+i)), Capacity: 1 << 40, Kind: "memory"}
}
