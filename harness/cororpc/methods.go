package cororpc

import (
	"context"
	"fmt"

	wire "github.com/oplogha/oplogha/impl/contract/cororpc"
)

// Invoke calls method m with req on c: the body in c's variant, the reply
// decoded. The error is a transport or I/O error (see Call) or a reply
// that does not decode (the connection stays open: the stream is intact);
// an application error is in the Expected.
func Invoke[Req, Res any](ctx context.Context, c *Conn, m *wire.Method[Req, Res], req Req) (wire.Expected[Res], error) {
	body, err := m.EncodeRequest(req, c.variant)
	if err != nil {
		return wire.Expected[Res]{}, err
	}
	_, resp, err := c.Call(ctx, m.ID(), body)
	if err != nil {
		return wire.Expected[Res]{}, fmt.Errorf("cororpc: %s: %w", m.Name(), err)
	}
	return m.DecodeResponse(resp)
}

// get is Invoke with the application error as the error: a wire.ErrorCode,
// which errors.As and errors.Is find.
func get[Req, Res any](ctx context.Context, c *Conn, m *wire.Method[Req, Res], req Req) (Res, error) {
	res, err := Invoke(ctx, c, m, req)
	if err != nil {
		var zero Res
		return zero, err
	}
	return res.Get()
}

// The typed calls, one per handler of impl/contract/cororpc, with
// upstream's parameters. An application error is returned as a
// wire.ErrorCode.

// ServiceReady returns the master's version ("2.0.0" at 3b5a594).
func (c *Conn) ServiceReady(ctx context.Context) (string, error) {
	return get(ctx, c, wire.ServiceReady, wire.ServiceReadyRequest{})
}

func (c *Conn) Ping(ctx context.Context, clientID wire.UUID) (wire.PingResponse, error) {
	return get(ctx, c, wire.Ping, wire.PingRequest{ClientID: clientID})
}

func (c *Conn) MountSegment(ctx context.Context, segment wire.Segment, clientID wire.UUID) error {
	_, err := get(ctx, c, wire.MountSegment, wire.MountSegmentRequest{Segment: segment, ClientID: clientID})
	return err
}

func (c *Conn) ReMountSegment(ctx context.Context, segments []wire.Segment, clientID wire.UUID) error {
	_, err := get(ctx, c, wire.ReMountSegment, wire.ReMountSegmentRequest{Segments: segments, ClientID: clientID})
	return err
}

func (c *Conn) UnmountSegment(ctx context.Context, segmentID, clientID wire.UUID) error {
	_, err := get(ctx, c, wire.UnmountSegment, wire.UnmountSegmentRequest{SegmentID: segmentID, ClientID: clientID})
	return err
}

func (c *Conn) PutStart(ctx context.Context, clientID wire.UUID, key string, sliceLength uint64, config wire.ReplicateConfig, tenantID string) ([]wire.ReplicaDescriptor, error) {
	return get(ctx, c, wire.PutStart, wire.PutStartRequest{ClientID: clientID, Key: key, SliceLength: sliceLength, Config: config, TenantID: tenantID})
}

func (c *Conn) PutEnd(ctx context.Context, clientID wire.UUID, meta wire.ObjectMeta, replicaType wire.ReplicaType, tenantID string) error {
	_, err := get(ctx, c, wire.PutEnd, wire.PutEndRequest{ClientID: clientID, ObjectMeta: meta, ReplicaType: replicaType, TenantID: tenantID})
	return err
}

func (c *Conn) PutRevoke(ctx context.Context, clientID wire.UUID, key string, replicaType wire.ReplicaType, tenantID string) error {
	_, err := get(ctx, c, wire.PutRevoke, wire.PutRevokeRequest{ClientID: clientID, Key: key, ReplicaType: replicaType, TenantID: tenantID})
	return err
}

func (c *Conn) GetReplicaList(ctx context.Context, key, tenantID string) (wire.GetReplicaListResponse, error) {
	return get(ctx, c, wire.GetReplicaList, wire.GetReplicaListRequest{Key: key, TenantID: tenantID})
}

func (c *Conn) ExistKey(ctx context.Context, key, tenantID string) (bool, error) {
	return get(ctx, c, wire.ExistKey, wire.ExistKeyRequest{Key: key, TenantID: tenantID})
}

func (c *Conn) Remove(ctx context.Context, key string, force bool, tenantID string) error {
	_, err := get(ctx, c, wire.Remove, wire.RemoveRequest{Key: key, Force: force, TenantID: tenantID})
	return err
}
