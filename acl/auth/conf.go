package auth

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The providers Java ships, the only ones there are here: a broker.conf
// naming them (as Java's quick start does) is accepted, any other refused.
var knownProviders = map[string]bool{
	"org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider":       true,
	"org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider":         true,
	"org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider": true,
	"org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider":   true,
	"org.apache.rocketmq.auth.authentication.strategy.StatelessAuthenticationStrategy":     true,
	"org.apache.rocketmq.auth.authentication.strategy.StatefulAuthenticationStrategy":      true,
	"org.apache.rocketmq.auth.authorization.strategy.StatelessAuthorizationStrategy":       true,
	"org.apache.rocketmq.auth.authorization.strategy.StatefulAuthorizationStrategy":        true,
}

// ApplyKey sets the field of a RocketMQ 5.3 auth key of broker.conf and
// reports whether key is one:
//
//	authenticationEnabled, authorizationEnabled    the Enabled fields
//	authenticationWhitelist, authorizationWhitelist  the Whitelist fields
//	                                               (comma-separated codes)
//	initAuthenticationUser                         {"username":..,"password":..}
//	                                               added to InitUsers
//	innerClientAuthenticationCredentials           {"accessKey":..,"secretKey":..}:
//	                                               InnerCredentials
//	authenticationProvider, authorizationProvider, *MetadataProvider,
//	*Strategy                                      Java's default class names
//	                                               only (the ones there are)
func (c *Config) ApplyKey(key, val string) (bool, error) {
	switch key {
	case "authenticationEnabled", "authorizationEnabled":
		v, err := strconv.ParseBool(val)
		if err != nil {
			return true, err
		}
		if key == "authenticationEnabled" {
			c.AuthenticationEnabled = v
		} else {
			c.AuthorizationEnabled = v
		}
	case "authenticationWhitelist", "authorizationWhitelist":
		var codes []int16
		for _, f := range strings.Split(val, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			n, err := strconv.ParseInt(f, 10, 16)
			if err != nil {
				return true, fmt.Errorf("%q is not a request code", f)
			}
			codes = append(codes, int16(n))
		}
		if key == "authenticationWhitelist" {
			c.AuthenticationWhitelist = codes
		} else {
			c.AuthorizationWhitelist = codes
		}
	case "initAuthenticationUser":
		var u protocol.UserInfo
		if err := json.Unmarshal([]byte(val), &u); err != nil || u.Username == "" || u.Password == "" {
			return true, fmt.Errorf(`want {"username":"...","password":"..."}`)
		}
		c.InitUsers = append(c.InitUsers, protocol.UserInfo{Username: u.Username, Password: u.Password})
	case "innerClientAuthenticationCredentials":
		var cr struct{ AccessKey, SecretKey string }
		if err := json.Unmarshal([]byte(val), &cr); err != nil || cr.AccessKey == "" || cr.SecretKey == "" {
			return true, fmt.Errorf(`want {"accessKey":"...","secretKey":"..."}`)
		}
		c.InnerCredentials = acl.Credentials{AccessKey: cr.AccessKey, SecretKey: cr.SecretKey}
	case "authenticationProvider", "authorizationProvider", "authenticationMetadataProvider",
		"authorizationMetadataProvider", "authenticationStrategy", "authorizationStrategy":
		if val != "" && !knownProviders[val] {
			return true, fmt.Errorf("only Java's default providers and strategies are built in")
		}
	default:
		return false, nil
	}
	return true, nil
}
