package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// authWhere holds -b/-c of the ACL 2.0 commands (user, acl).
type authWhere struct{ admin.Where }

func (w *authWhere) flags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&w.Broker, "broker", "b", "", "one broker's address (default: every master of --cluster)")
	cmd.Flags().StringVarP(&w.Cluster, "cluster", "c", "", "the brokers of this cluster (default: every cluster)")
}

func newUserCmd(a *app) *cobra.Command {
	cmd := nounCmd("user", "ACL 2.0 users (RocketMQ 5.3): create, update, delete, get, list", `Users of RocketMQ 5.3's ACL 2.0, kept by the brokers (authenticationEnabled /
authorizationEnabled in broker.conf). A user's name is the access key clients
sign with (--ak, WithCredentials), its password the secret key. A Super user
passes every authorization check; a Normal one needs ACL entries (runnelctl acl).
Managing them needs a user allowed Update (or Get) on the Cluster resource —
a super user, such as broker.conf's initAuthenticationUser.`, `  runnelctl --ak admin --sk admin-secret user create alice --password-file alice.pw
  runnelctl user list
  runnelctl user update alice --status disable`)
	var w authWhere
	var u protocol.UserInfo
	var passwordFile string
	userFlags := func(c *cobra.Command, create bool) {
		w.flags(c)
		c.Flags().StringVar(&u.Password, "password", "", "the user's password: the secret key it signs with (visible to every local user in ps: prefer --password-file)")
		c.Flags().StringVar(&passwordFile, "password-file", "", "read the password from this file's first line")
		c.Flags().StringVar(&u.UserType, "type", "", "Super or Normal (create: Normal)")
		c.Flags().StringVar(&u.UserStatus, "status", "", "enable or disable (create: enable)")
		c.MarkFlagsMutuallyExclusive("password", "password-file")
		if create {
			c.MarkFlagsOneRequired("password", "password-file")
		}
	}
	// readPassword takes --password-file's first line as the password.
	readPassword := func() error {
		if passwordFile == "" {
			return nil
		}
		data, err := os.ReadFile(passwordFile)
		if err != nil {
			return fmt.Errorf("--password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(data), "\n")
		if u.Password = strings.TrimRight(line, "\r"); u.Password == "" {
			return fmt.Errorf("--password-file %s: the first line is empty", passwordFile)
		}
		return nil
	}
	create := &cobra.Command{
		Use: "create NAME --password-file FILE", Short: "Create a user",
		Example: `  runnelctl user create alice --password-file alice.pw
  runnelctl user create alice --password alice-secret
  runnelctl user create ops --password ops-secret --type Super -c DefaultCluster`, Args: exactArgs(1, "a user name"),
		Aliases: []string{"createUser"},
		RunE: func(c *cobra.Command, args []string) error {
			if err := readPassword(); err != nil {
				return err
			}
			return userChange(a, c, "user "+args[0]+" created", func(adm *admin.Admin) ([]admin.Node, error) {
				u.Username = args[0]
				return adm.CreateUser(c.Context(), w.Where, u)
			})
		},
	}
	userFlags(create, true)
	update := &cobra.Command{
		Use: "update NAME [--password SECRET] [--type T] [--status S]", Short: "Change a user's password, type or status",
		Example: `  runnelctl user update alice --password new-secret
  runnelctl user update alice --status disable`,
		Aliases: []string{"updateUser"}, Args: exactArgs(1, "a user name"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := readPassword(); err != nil {
				return err
			}
			if u.Password == "" && u.UserType == "" && u.UserStatus == "" {
				return fmt.Errorf("%s: nothing to change: give --password, --type or --status", c.CommandPath())
			}
			return userChange(a, c, "user "+args[0]+" updated", func(adm *admin.Admin) ([]admin.Node, error) {
				u.Username = args[0]
				return adm.UpdateUser(c.Context(), w.Where, u)
			})
		},
	}
	userFlags(update, false)
	del := &cobra.Command{
		Use: "delete NAME", Short: "Delete a user and its ACL",
		Example: `  runnelctl user delete alice`, Aliases: []string{"deleteUser"}, Args: exactArgs(1, "a user name"),
		RunE: func(c *cobra.Command, args []string) error {
			return userChange(a, c, "user "+args[0]+" deleted", func(adm *admin.Admin) ([]admin.Node, error) {
				return adm.DeleteUser(c.Context(), w.Where, args[0])
			})
		},
	}
	w.flags(del)
	get := &cobra.Command{
		Use: "get NAME", Short: "Show a user",
		Example: `  runnelctl user get alice
  runnelctl user get alice -o json -b 127.0.0.1:10911`, Aliases: []string{"getUser"}, Args: exactArgs(1, "a user name"),
		RunE: func(c *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			got, found, err := adm.GetUser(c.Context(), w.Where, args[0])
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("user %q: %w", args[0], admin.ErrNotFound)
			}
			return printUsers(a, []protocol.UserInfo{got})
		},
	}
	w.flags(get)
	var filter string
	list := &cobra.Command{
		Use: "list [--filter TEXT]", Short: "List users",
		Example: `  runnelctl user list
  runnelctl user list --filter ali`, Aliases: []string{"listUser"}, Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			us, err := adm.ListUsers(c.Context(), w.Where, filter)
			if err != nil {
				return err
			}
			return printUsers(a, us)
		},
	}
	w.flags(list)
	list.Flags().StringVar(&filter, "filter", "", "only users whose name contains this")
	cmd.AddCommand(create, update, del, get, list)
	return cmd
}

func userChange(a *app, _ *cobra.Command, what string, do func(*admin.Admin) ([]admin.Node, error)) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	nodes, err := do(adm)
	if err != nil {
		return err
	}
	return printNodes(a, what, nodes)
}

// printUsers shows users without their passwords (JSON has them, as the
// broker answers them).
func printUsers(a *app, us []protocol.UserInfo) error {
	return printList(a, us, []string{"USER", "TYPE", "STATUS"}, func(u protocol.UserInfo) []any {
		return []any{u.Username, dash(u.UserType), dash(strings.ToLower(u.UserStatus))}
	})
}
