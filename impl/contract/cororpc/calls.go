package cororpc

import (
	"crypto/md5"
	"encoding/binary"
)

// FunctionID is coro_rpc's function id of a handler: the first four bytes
// of the MD5 digest of its qualified name, read big-endian. The request
// header carries it little-endian.
func FunctionID(qualifiedName string) uint32 {
	sum := md5.Sum([]byte(qualifiedName))
	return binary.BigEndian.Uint32(sum[:4])
}

// qualifiedPrefix is what coro_rpc names a member function of upstream's
// RPC service by, before the method's name.
const qualifiedPrefix = "mooncake::WrappedMasterService::"

// Function ids of the handlers the harness calls (FunctionID of
// "mooncake::WrappedMasterService::<name>"; a test checks each).
const (
	FnServiceReady   uint32 = 0x7b81bb56
	FnPing           uint32 = 0xd6c2dae5
	FnMountSegment   uint32 = 0x3e7ec4bb
	FnReMountSegment uint32 = 0x0b053b72
	FnUnmountSegment uint32 = 0x6f10b465
	FnPutStart       uint32 = 0x65ea9ac1
	FnPutEnd         uint32 = 0x8e8b2099
	FnPutRevoke      uint32 = 0xa0767c44
	FnGetReplicaList uint32 = 0x1f7ef174
	FnExistKey       uint32 = 0x89385f09
	FnRemove         uint32 = 0xf1b09774
)

// The argument lists, field for parameter in upstream's declaration order
// (include/rpc_service.h). Every parameter is sent, those with C++ default
// values (tenant_id, replica_type, force) too: coro_rpc packs the full
// parameter list and the server refuses a body of another type.

// ServiceReadyRequest is ServiceReady's empty argument list (an empty body).
type ServiceReadyRequest struct{}

// PingRequest is Ping(client_id); a single argument is packed as itself.
type PingRequest struct {
	ClientID UUID
}

// MountSegmentRequest is MountSegment(segment, client_id).
type MountSegmentRequest struct {
	Segment  Segment
	ClientID UUID
}

// ReMountSegmentRequest is ReMountSegment(segments, client_id).
type ReMountSegmentRequest struct {
	Segments []Segment
	ClientID UUID
}

// UnmountSegmentRequest is UnmountSegment(segment_id, client_id).
type UnmountSegmentRequest struct {
	SegmentID UUID
	ClientID  UUID
}

// PutStartRequest is PutStart(client_id, key, slice_length, config, tenant_id).
type PutStartRequest struct {
	ClientID    UUID
	Key         string
	SliceLength uint64
	Config      ReplicateConfig
	TenantID    string
}

// PutEndRequest is PutEnd(client_id, object_meta, replica_type, tenant_id).
type PutEndRequest struct {
	ClientID    UUID
	ObjectMeta  ObjectMeta
	ReplicaType ReplicaType
	TenantID    string
}

// PutRevokeRequest is PutRevoke(client_id, key, replica_type, tenant_id).
type PutRevokeRequest struct {
	ClientID    UUID
	Key         string
	ReplicaType ReplicaType
	TenantID    string
}

// GetReplicaListRequest is GetReplicaList(key, tenant_id).
type GetReplicaListRequest struct {
	Key      string
	TenantID string
}

// ExistKeyRequest is ExistKey(key, tenant_id). Its body has the same type,
// so the same bytes, as GetReplicaList's: only the function id differs.
type ExistKeyRequest struct {
	Key      string
	TenantID string
}

// RemoveRequest is Remove(key, force, tenant_id).
type RemoveRequest struct {
	Key      string
	Force    bool
	TenantID string
}

// The handlers. Each is immutable: its fields are unexported and nothing
// here changes them.
var (
	ServiceReady = newMethod("ServiceReady", FnServiceReady,
		body[ServiceReadyRequest]{}, stringPart)

	Ping = newMethod("Ping", FnPing,
		newBody("Ping arguments", itself(uuidPart, func(r *PingRequest) *UUID { return &r.ClientID })),
		pingResponsePart)

	MountSegment = newMethod("MountSegment", FnMountSegment,
		newBody("MountSegment arguments", structOf(
			fieldOf(segmentPart, func(r *MountSegmentRequest) *Segment { return &r.Segment }),
			fieldOf(uuidPart, func(r *MountSegmentRequest) *UUID { return &r.ClientID }),
		)), voidPart)

	ReMountSegment = newMethod("ReMountSegment", FnReMountSegment,
		newBody("ReMountSegment arguments", structOf(
			fieldOf(vectorOf(segmentPart, minSegmentBytes), func(r *ReMountSegmentRequest) *[]Segment { return &r.Segments }),
			fieldOf(uuidPart, func(r *ReMountSegmentRequest) *UUID { return &r.ClientID }),
		)), voidPart)

	UnmountSegment = newMethod("UnmountSegment", FnUnmountSegment,
		newBody("UnmountSegment arguments", structOf(
			fieldOf(uuidPart, func(r *UnmountSegmentRequest) *UUID { return &r.SegmentID }),
			fieldOf(uuidPart, func(r *UnmountSegmentRequest) *UUID { return &r.ClientID }),
		)), voidPart)

	PutStart = newMethod("PutStart", FnPutStart,
		newBody("PutStart arguments", structOf(
			fieldOf(uuidPart, func(r *PutStartRequest) *UUID { return &r.ClientID }),
			fieldOf(stringPart, func(r *PutStartRequest) *string { return &r.Key }),
			fieldOf(u64Part, func(r *PutStartRequest) *uint64 { return &r.SliceLength }),
			fieldOf(replicateConfigPart, func(r *PutStartRequest) *ReplicateConfig { return &r.Config }),
			fieldOf(stringPart, func(r *PutStartRequest) *string { return &r.TenantID }),
		)), replicasPart)

	PutEnd = newMethod("PutEnd", FnPutEnd,
		newBody("PutEnd arguments", structOf(
			fieldOf(uuidPart, func(r *PutEndRequest) *UUID { return &r.ClientID }),
			fieldOf(objectMetaPart, func(r *PutEndRequest) *ObjectMeta { return &r.ObjectMeta }),
			fieldOf(replicaTypePart, func(r *PutEndRequest) *ReplicaType { return &r.ReplicaType }),
			fieldOf(stringPart, func(r *PutEndRequest) *string { return &r.TenantID }),
		)), voidPart)

	PutRevoke = newMethod("PutRevoke", FnPutRevoke,
		newBody("PutRevoke arguments", structOf(
			fieldOf(uuidPart, func(r *PutRevokeRequest) *UUID { return &r.ClientID }),
			fieldOf(stringPart, func(r *PutRevokeRequest) *string { return &r.Key }),
			fieldOf(replicaTypePart, func(r *PutRevokeRequest) *ReplicaType { return &r.ReplicaType }),
			fieldOf(stringPart, func(r *PutRevokeRequest) *string { return &r.TenantID }),
		)), voidPart)

	GetReplicaList = newMethod("GetReplicaList", FnGetReplicaList,
		newBody("GetReplicaList arguments", structOf(
			fieldOf(stringPart, func(r *GetReplicaListRequest) *string { return &r.Key }),
			fieldOf(stringPart, func(r *GetReplicaListRequest) *string { return &r.TenantID }),
		)), getReplicaListResponsePart)

	ExistKey = newMethod("ExistKey", FnExistKey,
		newBody("ExistKey arguments", structOf(
			fieldOf(stringPart, func(r *ExistKeyRequest) *string { return &r.Key }),
			fieldOf(stringPart, func(r *ExistKeyRequest) *string { return &r.TenantID }),
		)), boolPart)

	Remove = newMethod("Remove", FnRemove,
		newBody("Remove arguments", structOf(
			fieldOf(stringPart, func(r *RemoveRequest) *string { return &r.Key }),
			fieldOf(boolPart, func(r *RemoveRequest) *bool { return &r.Force }),
			fieldOf(stringPart, func(r *RemoveRequest) *string { return &r.TenantID }),
		)), voidPart)
)

// Handlers are the handlers above, in the order upstream registers them.
func Handlers() []Handler {
	return []Handler{ExistKey, GetReplicaList, PutStart, PutEnd, PutRevoke, Remove,
		MountSegment, ReMountSegment, UnmountSegment, Ping, ServiceReady}
}

// HandlerByID is the handler of a function id, if it is one of Handlers.
func HandlerByID(id uint32) (Handler, bool) {
	for _, h := range Handlers() {
		if h.ID() == id {
			return h, true
		}
	}
	return nil, false
}

// HandlerByName is the handler of a name ("Ping") or qualified name
// ("mooncake::WrappedMasterService::Ping"), if it is one of Handlers.
func HandlerByName(name string) (Handler, bool) {
	for _, h := range Handlers() {
		if h.Name() == name || h.QualifiedName() == name {
			return h, true
		}
	}
	return nil, false
}
