package namesrv

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/runnelmq/runnel/namesrv/routeinfo"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func (s *Server) registerHandlers() {
	s.rs.Handle(protocol.ReqRegisterBroker, s.registerBroker)
	s.rs.Handle(protocol.ReqUnregisterBroker, s.unregisterBroker)
	s.rs.Handle(protocol.ReqBrokerHeartbeat, s.brokerHeartbeat)
	s.rs.Handle(protocol.ReqGetRouteInfoByTopic, s.getRouteInfo)
	s.rs.Handle(protocol.ReqGetBrokerClusterInfo, s.getClusterInfo)
	s.rs.Handle(protocol.ReqGetAllTopicListFromNameServer, s.getAllTopicList)
	s.rs.Handle(protocol.ReqDeleteTopicInNameSrv, s.deleteTopic)
	s.rs.Handle(protocol.ReqGetTopicsByCluster, s.getTopicsByCluster)
	s.rs.Handle(protocol.ReqQueryDataVersion, s.queryDataVersion)
	s.rs.Handle(protocol.ReqWipeWritePermOfBroker, s.writePermOfBroker)
	s.rs.Handle(protocol.ReqAddWritePermOfBroker, s.writePermOfBroker)
	s.rs.HandleDefault(s.notSupported)
}

// badRequest answers input that does not decode. Java throws
// RemotingCommandException there, which its transport turns into
// SYSTEM_ERROR with the exception's message as remark.
func (s *Server) badRequest(c *remoting.Conn, req *protocol.Command, err error) *protocol.Command {
	s.log.Warn("bad request", "code", req.Code, "remote", c.RemoteAddr(), "err", err)
	return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
}

func success(req *protocol.Command) *protocol.Command {
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// jsonResponse answers SUCCESS with v as compact JSON.
func (s *Server) jsonResponse(req *protocol.Command, v any) *protocol.Command {
	body, err := json.Marshal(v)
	if err != nil {
		// Only unencodable types fail here: a bug, not bad input.
		s.log.Error("encode response", "code", req.Code, "err", err)
		return protocol.NewResponse(req, protocol.RespSystemError, "namesrv: encode response: "+err.Error())
	}
	resp := success(req)
	resp.Body = body
	return resp
}

func (s *Server) registerBroker(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.RegisterBrokerRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	if h.BodyCRC32 != 0 && protocol.BodyCRC32(req.Body) != h.BodyCRC32 {
		s.log.Warn("register broker: body crc32 mismatch", "broker", h.BrokerName, "addr", h.BrokerAddr,
			"want", h.BodyCRC32, "got", protocol.BodyCRC32(req.Body))
		return protocol.NewResponse(req, protocol.RespSystemError, "crc32 not match")
	}
	body, err := protocol.DecodeRegisterBrokerBody(req.Body, h.Compressed)
	if err != nil {
		return s.badRequest(c, req, fmt.Errorf("namesrv: failed to decode RegisterBrokerBody: %w", err))
	}
	res := s.table.RegisterBroker(routeinfo.Registration{
		ClusterName:      h.ClusterName,
		BrokerName:       h.BrokerName,
		BrokerAddr:       h.BrokerAddr,
		BrokerID:         h.BrokerID,
		HAServerAddr:     h.HAServerAddr,
		HeartbeatTimeout: time.Duration(h.HeartbeatTimeoutMillis) * time.Millisecond,
		Topics:           body.TopicConfigSerializeWrapper,
		ConnID:           c.ID(),
	})
	if res.TopicsUpdated {
		s.log.Info("broker registered", "cluster", h.ClusterName, "broker", h.BrokerName, "id", h.BrokerID,
			"addr", h.BrokerAddr, "topics", len(body.TopicConfigSerializeWrapper.TopicConfigTable),
			"dataVersion", body.TopicConfigSerializeWrapper.DataVersion.Counter)
	} else {
		s.log.Debug("broker registration refreshed", "broker", h.BrokerName, "id", h.BrokerID, "addr", h.BrokerAddr)
	}
	resp := success(req)
	resp.ExtFields = protocol.RegisterBrokerResponseHeader{HAServerAddr: res.HAServerAddr, MasterAddr: res.MasterAddr}.Encode()
	return resp
}

func (s *Server) unregisterBroker(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.UnregisterBrokerRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	known := s.table.UnregisterBroker(h.ClusterName, h.BrokerAddr, h.BrokerName, h.BrokerID)
	s.log.Info("broker unregistered", "cluster", h.ClusterName, "broker", h.BrokerName, "id", h.BrokerID,
		"addr", h.BrokerAddr, "known", known)
	return success(req)
}

// brokerHeartbeat refreshes a broker between registrations. Like Java it
// answers SUCCESS even for a broker it does not know; that broker's next
// registration adds it.
func (s *Server) brokerHeartbeat(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.BrokerHeartbeatRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	if !s.table.Heartbeat(h.ClusterName, h.BrokerAddr) {
		s.log.Debug("heartbeat from unregistered broker", "cluster", h.ClusterName, "addr", h.BrokerAddr)
	}
	return success(req)
}

func (s *Server) getRouteInfo(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetRouteInfoRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	route, ok := s.table.TopicRoute(h.Topic)
	if !ok {
		return protocol.NewResponse(req, protocol.RespTopicNotExist,
			"No topic route info in name server for the topic: "+h.Topic)
	}
	// Always standard, compact JSON: the official Go client reads it, and
	// Java clients of every version parse quoted integer keys too.
	return s.jsonResponse(req, route)
}

func (s *Server) getClusterInfo(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	return s.jsonResponse(req, s.table.ClusterInfo())
}

func (s *Server) getAllTopicList(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	return s.jsonResponse(req, protocol.TopicList{TopicList: s.table.Topics()})
}

func (s *Server) deleteTopic(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.DeleteTopicFromNamesrvRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	removed := s.table.DeleteTopic(h.Topic, h.ClusterName)
	s.log.Info("topic deleted", "topic", h.Topic, "cluster", h.ClusterName, "existed", removed)
	return success(req)
}

// getTopicsByCluster serves Java's mqadmin topicList -c.
func (s *Server) getTopicsByCluster(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetTopicsByClusterRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	return s.jsonResponse(req, protocol.TopicList{TopicList: s.table.TopicsOfCluster(h.Cluster)})
}

// queryDataVersion answers a Java broker asking whether it must register
// again (brokers with forceRegister=false ask before every registration).
func (s *Server) queryDataVersion(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.QueryDataVersionRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	var v protocol.DataVersion
	if err := json.Unmarshal(req.Body, &v); err != nil {
		return s.badRequest(c, req, fmt.Errorf("namesrv: failed to decode DataVersion: %w", err))
	}
	changed, current, known := s.table.QueryDataVersion(h.BrokerAddr, v)
	resp := success(req)
	resp.ExtFields = protocol.QueryDataVersionResponseHeader{Changed: changed}.Encode()
	if known {
		body, err := json.Marshal(current)
		if err != nil {
			return s.badRequest(c, req, err)
		}
		resp.Body = body
	}
	return resp
}

func (s *Server) notSupported(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	s.log.Debug("request code not supported", "code", req.Code, "remote", c.RemoteAddr())
	return protocol.NewResponse(req, protocol.RespRequestCodeNotSupported,
		fmt.Sprintf("request code %d not supported by the name server", req.Code))
}
