package acl

import (
	"context"
	"strconv"
	"sync"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// NeedsFunc says what one remoting request needs: it appends the needs to
// dst, reading the request's ext fields from f (names may alias f: they
// are used only while the check runs) and, where they are there, its body.
// An error (a body that does not decode) makes the request need an
// administrator: what cannot be read cannot be granted to anyone less.
type NeedsFunc func(dst []Need, req *protocol.Command, f Fields) ([]Need, error)

// Codes is one remoting server's table of what each request code it serves
// needs: each door owns its own (the broker's remoting door, the name
// server).
type Codes map[int16]NeedsFunc

// Checkpoint decides every request a remoting server gets: the request's
// needs from its code's entry in the server's Codes, its proof RocketMQ's
// signature over its ext fields and body, then the Guard's decision. A
// code with no entry needs an administrator (AdminNeed): default deny, so
// a handler added without a mapping is closed, not open (an administrator
// then gets the handler's answer, such as REQUEST_CODE_NOT_SUPPORTED).
type Checkpoint struct {
	guard   Guard
	codes   map[int16]checkpointEntry
	cluster string
}

type checkpointEntry struct {
	op    string // the code in decimal (Request.Op), made once
	needs NeedsFunc
}

// NewCheckpoint returns the checkpoint of a server whose table is codes,
// deciding with g; cluster names the Cluster resource an unmapped code
// needs All on ("" for every cluster, as the name server's).
func NewCheckpoint(g Guard, codes Codes, cluster string) *Checkpoint {
	cp := &Checkpoint{guard: g, codes: make(map[int16]checkpointEntry, len(codes)), cluster: cluster}
	for code, fn := range codes {
		cp.codes[code] = checkpointEntry{op: strconv.Itoa(int(code)), needs: fn}
	}
	return cp
}

// Mapped reports whether code has an entry.
func (cp *Checkpoint) Mapped(code int16) bool {
	_, ok := cp.codes[code]
	return ok
}

// checkState is one check's request and room for its needs, pooled: the
// check of a send allocates nothing.
type checkState struct {
	req   Request
	needs [8]Need
}

var checkStates = sync.Pool{New: func() any { return new(checkState) }}

// Check decides req from remote ("ip:port"): nil, or the Guard's refusal.
func (cp *Checkpoint) Check(remote string, req *protocol.Command) error {
	f := collect(req)
	f.body = req.Body
	st := checkStates.Get().(*checkState)
	r := &st.req
	*r = Request{Source: remote, AccessKey: f.view(FieldAccessKey), Needs: st.needs[:0]}
	if _, signed := f.get(FieldSignature); signed {
		r.Proof = f
	}
	e, ok := cp.codes[req.Code]
	if ok {
		r.Op = e.op
		ns, err := e.needs(r.Needs, req, Fields{f})
		if err != nil {
			ns = append(r.Needs[:0], AdminNeed(cp.cluster))
		}
		r.Needs = ns
	} else {
		r.Op = strconv.Itoa(int(req.Code))
		r.Needs = append(r.Needs, AdminNeed(cp.cluster))
	}
	err := cp.guard.Decide(r)
	*r = Request{} // nothing of f, nor the needs' names aliasing it, stays in the pool
	checkStates.Put(st)
	f.release()
	return err
}

// Interceptor is the server interceptor that refuses what Check refuses:
// a refusal that carries its own response code (ResponseCode: plain ACL's
// SYSTEM_ERROR and AclException remark, ACL 2.0's NO_PERMISSION) answers
// with it. The handler never runs, so nothing is stored.
func (cp *Checkpoint) Interceptor() remoting.Interceptor {
	return remoting.Interceptor{Request: func(_ context.Context, conn *remoting.Conn, req *protocol.Command) *protocol.Command {
		err := cp.Check(conn.RemoteAddr(), req)
		if err == nil {
			return nil
		}
		if r, ok := err.(interface{ ResponseCode() (int16, string) }); ok {
			code, remark := r.ResponseCode()
			return protocol.NewResponse(req, code, remark)
		}
		return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
	},
		// Check reads ext fields with RangeExtBytes only, so a send or a
		// pull keeps them undecoded for its typed header.
		UndecodedExt: true,
	}
}

// ResponseCode is the code and remark a remoting client gets for the
// refusal: SYSTEM_ERROR and Remark, the code Java's remoting gives an
// exception thrown by an RPC hook.
func (e *Error) ResponseCode() (int16, string) { return protocol.RespSystemError, e.Remark() }

// Response is the refusal's answer to req.
func (e *Error) Response(req *protocol.Command) *protocol.Command {
	return protocol.NewResponse(req, protocol.RespSystemError, e.Remark())
}
