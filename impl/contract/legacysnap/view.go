package legacysnap

import "encoding/hex"

// View is a snapshot as upstream's decoder recovers it, in the shape of the
// golden vectors' expected.json (testdata/upstream/legacy/*/expected.json):
// the fields the files determine — identity, files, "decoded" and
// "written_but_not_decoded". Its JSON is compared with those files field by
// field.
type View struct {
	ClusterID            string          `json:"cluster_id"`
	SnapshotID           string          `json:"snapshot_id"`
	LatestTxt            string          `json:"latest_txt,omitempty"`
	ManifestTxt          string          `json:"manifest_txt"`
	DescriptorTxt        string          `json:"descriptor_txt"`
	Files                map[string]File `json:"files"`
	Decoded              DecodedView     `json:"decoded"`
	WrittenButNotDecoded []SkippedView   `json:"written_but_not_decoded"`
}

// DecodedView is the snapshot as upstream's decoder recovers it.
type DecodedView struct {
	ReplicaNextID          uint64         `json:"replica_next_id"`
	DiscardedReplicaGroups int            `json:"discarded_replica_groups"`
	Segments               []SegmentView  `json:"segments"`
	LocalSSDClients        []LocalSSDView `json:"local_ssd_clients"`
	Tasks                  []TaskView     `json:"tasks"`
	ObjectCount            int            `json:"object_count"`
	Objects                []ObjectView   `json:"objects"`
}

// SegmentView is one mounted segment. Used is absent for a segment
// upstream cannot allocate on (not OK, or without an allocator).
type SegmentView struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Endpoint string  `json:"endpoint"`
	Base     uint64  `json:"base"`
	Capacity uint64  `json:"capacity"`
	ClientID string  `json:"client_id"`
	Status   int16   `json:"status"`
	Used     *uint64 `json:"used,omitempty"`
}

// LocalSSDView is one client's local-disk offload state.
type LocalSSDView struct {
	ClientID           string               `json:"client_id"`
	EnableOffloading   bool                 `json:"enable_offloading"`
	PendingOffloads    []PendingOffloadView `json:"pending_offloads"`
	TotalCapacityBytes *int64               `json:"total_capacity_bytes"`
}

// PendingOffloadView is an object queued for offload.
type PendingOffloadView struct {
	EncodedKeyHex string `json:"encoded_key_hex"`
	Tenant        string `json:"tenant"`
	Key           string `json:"key"`
	Size          int64  `json:"size"`
}

// TaskView is a task manager task.
type TaskView struct {
	ID              string `json:"id"`
	Type            int32  `json:"type"`
	Status          int32  `json:"status"`
	Payload         string `json:"payload"`
	CreatedAtMS     int64  `json:"created_at_ms"`
	LastUpdatedAtMS int64  `json:"last_updated_at_ms"`
	Message         string `json:"message"`
	AssignedClient  string `json:"assigned_client"`
}

// ObjectView is one object. Key is the key as JSON text can carry it;
// KeyHex is its bytes.
type ObjectView struct {
	Tenant         string        `json:"tenant"`
	Key            string        `json:"key"`
	KeyHex         string        `json:"key_hex"`
	Shard          int           `json:"shard"`
	Size           uint64        `json:"size"`
	ClientID       string        `json:"client_id"`
	PutStartTimeMS uint64        `json:"put_start_time_ms"`
	LeaseTimeoutMS uint64        `json:"lease_timeout_ms"`
	HardPinned     bool          `json:"hard_pinned"`
	DataType       uint8         `json:"data_type"`
	GroupID        string        `json:"group_id"`
	ObjectChecksum *uint64       `json:"object_checksum"`
	Replicas       []ReplicaView `json:"replicas"`
}

// ReplicaView is one replica; the fields after Type are those of its type.
type ReplicaView struct {
	ID     uint64 `json:"id"`
	Status string `json:"status"`
	Type   string `json:"type"`
	// MEMORY: the segment's name and endpoint, the buffer's address and length.
	Segment  *string `json:"segment,omitempty"`
	Endpoint *string `json:"endpoint,omitempty"`
	Address  *uint64 `json:"address,omitempty"`
	Length   *uint64 `json:"length,omitempty"`
	// LOCAL_DISK.
	ClientID          *string `json:"client_id,omitempty"`
	TransportEndpoint *string `json:"transport_endpoint,omitempty"`
	// LOCAL_DISK, DISK, DFS.
	ObjectSize *uint64 `json:"object_size,omitempty"`
	// DISK, DFS.
	FilePath *string `json:"file_path,omitempty"`
	// DFS.
	Offset      *uint64 `json:"offset,omitempty"`
	AlignedSize *uint64 `json:"aligned_size,omitempty"`
	ShardIdx    *int32  `json:"shard_idx,omitempty"`
}

// SkippedView is an object written but dropped by upstream's decoder.
type SkippedView struct {
	Tenant   string   `json:"tenant"`
	Key      string   `json:"key"`
	KeyHex   string   `json:"key_hex"`
	Reason   string   `json:"reason"`
	Segments []string `json:"segments"`
}

// NewView describes snapshot snap of clusterID (read by Read; latest is
// what latest.txt names, "" when unread, with its file).
func NewView(clusterID string, snap *Snapshot, latest string, latestFile *File) View {
	d := snap.Decoded
	v := View{ClusterID: clusterID, SnapshotID: snap.ID, LatestTxt: latest, ManifestTxt: snap.Manifest,
		DescriptorTxt: snap.Descriptor, Files: map[string]File{}, WrittenButNotDecoded: []SkippedView{}}
	for k, f := range snap.Files {
		v.Files[k] = f
	}
	if latestFile != nil {
		v.Files[Key(clusterID, LatestObject)] = *latestFile
	}
	v.Decoded = decodedView(d)
	for _, s := range d.Skipped {
		v.WrittenButNotDecoded = append(v.WrittenButNotDecoded, SkippedView{Tenant: s.Tenant, Key: s.Key,
			KeyHex: hex.EncodeToString([]byte(s.Key)), Reason: s.Reason, Segments: []string{s.Segment}})
	}
	return v
}

func decodedView(d *Decoded) DecodedView {
	v := DecodedView{ReplicaNextID: d.ReplicaNextID, DiscardedReplicaGroups: len(d.Discarded), ObjectCount: len(d.Objects),
		Segments: []SegmentView{}, LocalSSDClients: []LocalSSDView{}, Tasks: []TaskView{}, Objects: []ObjectView{}}
	for _, s := range d.Segments {
		sv := SegmentView{ID: s.ID.String(), Name: s.Name, Endpoint: s.Endpoint, Base: s.Base, Capacity: s.Size,
			ClientID: s.Client.String(), Status: int16(s.Status)}
		if used, ok := d.Used(s); ok {
			sv.Used = &used
		}
		v.Segments = append(v.Segments, sv)
	}
	for _, c := range d.LocalSSD {
		lv := LocalSSDView{ClientID: c.Client.String(), EnableOffloading: c.EnableOffloading, TotalCapacityBytes: c.TotalCapacityBytes,
			PendingOffloads: []PendingOffloadView{}}
		for _, p := range c.Pending {
			lv.PendingOffloads = append(lv.PendingOffloads, PendingOffloadView{EncodedKeyHex: hex.EncodeToString([]byte(p.EncodedKey)),
				Tenant: p.Tenant, Key: p.Key, Size: p.Size})
		}
		v.LocalSSDClients = append(v.LocalSSDClients, lv)
	}
	for _, t := range d.Tasks {
		v.Tasks = append(v.Tasks, TaskView{ID: t.ID.String(), Type: t.Type, Status: t.Status, Payload: t.Payload,
			CreatedAtMS: t.CreatedMS, LastUpdatedAtMS: t.UpdatedMS, Message: t.Message, AssignedClient: t.AssignedClient.String()})
	}
	for _, o := range d.Objects {
		ov := ObjectView{Tenant: o.Tenant, Key: o.Key, KeyHex: hex.EncodeToString([]byte(o.Key)), Shard: o.Shard, Size: o.Size,
			ClientID: o.ClientID.String(), PutStartTimeMS: o.PutStartMS, LeaseTimeoutMS: o.LeaseTimeoutMS, HardPinned: o.HardPinned,
			DataType: o.DataType, GroupID: o.GroupID, ObjectChecksum: o.Checksum, Replicas: []ReplicaView{}}
		for _, r := range o.Replicas {
			ov.Replicas = append(ov.Replicas, replicaView(d, r))
		}
		v.Objects = append(v.Objects, ov)
	}
	return v
}

func replicaView(d *Decoded, r Replica) ReplicaView {
	v := ReplicaView{ID: r.ID, Status: r.Status.String(), Type: r.Type.String()}
	switch {
	case r.Memory != nil:
		m := r.Memory
		name, endpoint := m.Segment.String(), ""
		if s, ok := d.SegmentByID(m.Segment); ok {
			name, endpoint = s.Name, s.Endpoint
		}
		v.Segment, v.Endpoint, v.Address, v.Length = &name, &endpoint, &m.Address, &m.Size
	case r.LocalDisk != nil:
		c := r.LocalDisk.Client.String()
		v.ClientID, v.ObjectSize, v.TransportEndpoint = &c, &r.LocalDisk.ObjectSize, &r.LocalDisk.Endpoint
	case r.Disk != nil:
		v.FilePath, v.ObjectSize = &r.Disk.FilePath, &r.Disk.ObjectSize
	case r.DFS != nil:
		f := r.DFS
		v.FilePath, v.Offset, v.ObjectSize, v.AlignedSize, v.ShardIdx = &f.FilePath, &f.Offset, &f.ObjectSize, &f.AlignedSize, &f.ShardIdx
	}
	return v
}
