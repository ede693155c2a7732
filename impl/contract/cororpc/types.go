package cororpc

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// The argument and return types of the handlers, as upstream declares them
// (mooncake-store/include/types.h, allocator.h, replica.h, rpc_types.h at
// 3b5a594; see the vectors' README for the lines). Where impl/contract/metadata
// already has the same upstream type (the replica descriptor and its
// variant, the UUID, the data type), it is that type.

// UUID is upstream's UUID, a std::pair<uint64_t, uint64_t>: 16 raw bytes.
type UUID = metadata.UUID

// Replica descriptors, as the OpLog payloads and the snapshot carry them.
type (
	ReplicaDescriptor       = metadata.ReplicaDescriptor
	ReplicaVariant          = metadata.ReplicaVariant
	ReplicaStatus           = metadata.ReplicaStatus
	BufferDescriptor        = metadata.BufferDescriptor
	MemoryDescriptor        = metadata.MemoryDescriptor
	NoFDescriptor           = metadata.NoFDescriptor
	DiskDescriptor          = metadata.DiskDescriptor
	LocalDiskDescriptor     = metadata.LocalDiskDescriptor
	DistributedFSDescriptor = metadata.DistributedFSDescriptor
	ObjectDataType          = metadata.ObjectDataType
)

// ErrorCode is upstream's ErrorCode (an int32 enum), the error of every
// handler's tl::expected. It is an error, so a typed client can return it
// and a caller can errors.As it.
type ErrorCode int32

// Upstream's error codes.
const (
	OK                         ErrorCode = 0
	InternalError              ErrorCode = -1
	BufferOverflow             ErrorCode = -10
	ShardIndexOutOfRange       ErrorCode = -100
	SegmentNotFound            ErrorCode = -101
	SegmentAlreadyExists       ErrorCode = -102
	ClientNotFound             ErrorCode = -103
	NoAvailableHandle          ErrorCode = -200
	InvalidVersion             ErrorCode = -300
	InvalidKey                 ErrorCode = -400
	WriteFail                  ErrorCode = -500
	InvalidParams              ErrorCode = -600
	IllegalClient              ErrorCode = -601
	InvalidWrite               ErrorCode = -700
	InvalidRead                ErrorCode = -701
	InvalidReplica             ErrorCode = -702
	ReplicaIsNotReady          ErrorCode = -703
	ObjectNotFound             ErrorCode = -704
	ObjectAlreadyExists        ErrorCode = -705
	ObjectHasLease             ErrorCode = -706
	LeaseExpired               ErrorCode = -707
	ObjectHasReplicationTask   ErrorCode = -708
	ObjectNoReplicationTask    ErrorCode = -709
	ReplicaNotFound            ErrorCode = -710
	ReplicaAlreadyExists       ErrorCode = -711
	ReplicaIsGone              ErrorCode = -712
	TransferFail               ErrorCode = -800
	RPCFail                    ErrorCode = -900
	EtcdOperationError         ErrorCode = -1000
	EtcdKeyNotExist            ErrorCode = -1001
	EtcdTransactionFail        ErrorCode = -1002
	EtcdCtxCancelled           ErrorCode = -1003
	UnavailableInCurrentStatus ErrorCode = -1010
	UnavailableInCurrentMode   ErrorCode = -1011
	FileNotFound               ErrorCode = -1100
	FileOpenFail               ErrorCode = -1101
	FileReadFail               ErrorCode = -1102
	FileWriteFail              ErrorCode = -1103
	FileInvalidBuffer          ErrorCode = -1104
	FileLockFail               ErrorCode = -1105
	FileInvalidHandle          ErrorCode = -1106
	BucketNotFound             ErrorCode = -1200
	BucketAlreadyExists        ErrorCode = -1201
	KeysExceedBucketLimit      ErrorCode = -1202
	KeysUltraLimit             ErrorCode = -1203
	UnableOffload              ErrorCode = -1300
	UnableOffloading           ErrorCode = -1301
	TaskNotFound               ErrorCode = -1400
	TaskPendingLimitExceeded   ErrorCode = -1401
)

// String is upstream's enumerator name, or ErrorCode(n) for a code it
// does not know. The names of the ten codes the vectors carry are checked
// against them; the rest are read off upstream's types.h (an upstream
// revision a little older than 3b5a594: codes are added there, never
// renumbered, so a newer code prints as a number).
func (c ErrorCode) String() string {
	switch c {
	case OK:
		return "OK"
	case InternalError:
		return "INTERNAL_ERROR"
	case BufferOverflow:
		return "BUFFER_OVERFLOW"
	case ShardIndexOutOfRange:
		return "SHARD_INDEX_OUT_OF_RANGE"
	case SegmentNotFound:
		return "SEGMENT_NOT_FOUND"
	case SegmentAlreadyExists:
		return "SEGMENT_ALREADY_EXISTS"
	case ClientNotFound:
		return "CLIENT_NOT_FOUND"
	case NoAvailableHandle:
		return "NO_AVAILABLE_HANDLE"
	case InvalidVersion:
		return "INVALID_VERSION"
	case InvalidKey:
		return "INVALID_KEY"
	case WriteFail:
		return "WRITE_FAIL"
	case InvalidParams:
		return "INVALID_PARAMS"
	case IllegalClient:
		return "ILLEGAL_CLIENT"
	case InvalidWrite:
		return "INVALID_WRITE"
	case InvalidRead:
		return "INVALID_READ"
	case InvalidReplica:
		return "INVALID_REPLICA"
	case ReplicaIsNotReady:
		return "REPLICA_IS_NOT_READY"
	case ObjectNotFound:
		return "OBJECT_NOT_FOUND"
	case ObjectAlreadyExists:
		return "OBJECT_ALREADY_EXISTS"
	case ObjectHasLease:
		return "OBJECT_HAS_LEASE"
	case LeaseExpired:
		return "LEASE_EXPIRED"
	case ObjectHasReplicationTask:
		return "OBJECT_HAS_REPLICATION_TASK"
	case ObjectNoReplicationTask:
		return "OBJECT_NO_REPLICATION_TASK"
	case ReplicaNotFound:
		return "REPLICA_NOT_FOUND"
	case ReplicaAlreadyExists:
		return "REPLICA_ALREADY_EXISTS"
	case ReplicaIsGone:
		return "REPLICA_IS_GONE"
	case TransferFail:
		return "TRANSFER_FAIL"
	case RPCFail:
		return "RPC_FAIL"
	case EtcdOperationError:
		return "ETCD_OPERATION_ERROR"
	case EtcdKeyNotExist:
		return "ETCD_KEY_NOT_EXIST"
	case EtcdTransactionFail:
		return "ETCD_TRANSACTION_FAIL"
	case EtcdCtxCancelled:
		return "ETCD_CTX_CANCELLED"
	case UnavailableInCurrentStatus:
		return "UNAVAILABLE_IN_CURRENT_STATUS"
	case UnavailableInCurrentMode:
		return "UNAVAILABLE_IN_CURRENT_MODE"
	case FileNotFound:
		return "FILE_NOT_FOUND"
	case FileOpenFail:
		return "FILE_OPEN_FAIL"
	case FileReadFail:
		return "FILE_READ_FAIL"
	case FileWriteFail:
		return "FILE_WRITE_FAIL"
	case FileInvalidBuffer:
		return "FILE_INVALID_BUFFER"
	case FileLockFail:
		return "FILE_LOCK_FAIL"
	case FileInvalidHandle:
		return "FILE_INVALID_HANDLE"
	case BucketNotFound:
		return "BUCKET_NOT_FOUND"
	case BucketAlreadyExists:
		return "BUCKET_ALREADY_EXISTS"
	case KeysExceedBucketLimit:
		return "KEYS_EXCEED_BUCKET_LIMIT"
	case KeysUltraLimit:
		return "KEYS_ULTRA_LIMIT"
	case UnableOffload:
		return "UNABLE_OFFLOAD"
	case UnableOffloading:
		return "UNABLE_OFFLOADING"
	case TaskNotFound:
		return "TASK_NOT_FOUND"
	case TaskPendingLimitExceeded:
		return "TASK_PENDING_LIMIT_EXCEEDED"
	}
	return fmt.Sprintf("ErrorCode(%d)", int32(c))
}

// Error makes an ErrorCode an error: "mooncake OBJECT_NOT_FOUND (-704)".
func (c ErrorCode) Error() string { return fmt.Sprintf("mooncake %s (%d)", c.String(), int32(c)) }

// ClientStatus is upstream's ClientStatus (an int enum, 4 bytes).
type ClientStatus int32

// Client statuses.
const (
	ClientUndefined   ClientStatus = 0
	ClientOK          ClientStatus = 1
	ClientNeedRemount ClientStatus = 2
)

func (s ClientStatus) String() string {
	switch s {
	case ClientUndefined:
		return "UNDEFINED"
	case ClientOK:
		return "OK"
	case ClientNeedRemount:
		return "NEED_REMOUNT"
	}
	return fmt.Sprintf("ClientStatus(%d)", int32(s))
}

// ReplicaType is upstream's ReplicaType (an int enum, 4 bytes): which
// replicas PutEnd and PutRevoke act on.
type ReplicaType int32

// Replica types.
const (
	ReplicaMemory    ReplicaType = 0
	ReplicaDisk      ReplicaType = 1
	ReplicaLocalDisk ReplicaType = 2
	ReplicaNoFSSD    ReplicaType = 3
	ReplicaAll       ReplicaType = 4
	ReplicaDFS       ReplicaType = 100
)

// SoftPinAction is upstream's SoftPinAction (a uint8 enum).
type SoftPinAction uint8

// Soft pin actions.
const (
	SoftPinPreserve SoftPinAction = 0
	SoftPinEnable   SoftPinAction = 1
	SoftPinDisable  SoftPinAction = 2
)

// Segment is upstream's Segment: a memory region a client mounts.
type Segment struct {
	ID         UUID
	Name       string
	Base       uint64 // uintptr_t
	Size       uint64 // size_t
	TEEndpoint string
	Protocol   string
	HostID     string
}

// ReplicateConfig is upstream's ReplicateConfig, PutStart's placement
// request. The two optionals are pointers: nil is std::nullopt.
type ReplicateConfig struct {
	ReplicaNum            uint64 // size_t
	NoFReplicaNum         uint64 // size_t
	DFSReplicaNum         uint64 // size_t
	SoftPinAction         SoftPinAction
	SoftPinTTLMs          *uint64
	WithHardPin           bool
	PreferredSegments     []string
	PreferredSegment      string
	PreferredNoFSegments  []string
	PreferAllocInSameNode bool
	DataType              ObjectDataType
	HostID                string
	GroupIDs              *[]string
}

// ObjectMeta is upstream's ObjectMeta, PutEnd's object: the key and an
// optional checksum (nil: none).
type ObjectMeta struct {
	Key            string
	ObjectChecksum *uint64
}

// PingResponse is upstream's PingResponse.
type PingResponse struct {
	ViewVersionID int64
	ClientStatus  ClientStatus
}

// GetReplicaListResponse is upstream's GetReplicaListResponse.
type GetReplicaListResponse struct {
	Replicas       []ReplicaDescriptor
	LeaseTTLMs     uint64
	ObjectChecksum *uint64
}

// Void is the value of a tl::expected<void, ErrorCode>: nothing on the wire.
type Void struct{}
