package oplog

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

type mvccKV = mvccpb.KeyValue

// firstKV is the first key of a range response inside a txn, or nil.
func firstKV(op *pb.ResponseOp) *mvccKV {
	r := op.GetResponseRange()
	if r == nil || len(r.Kvs) == 0 {
		return nil
	}
	return r.Kvs[0]
}
