package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cleanads/cleanads/internal/auth"
	"github.com/cleanads/cleanads/internal/model"
)

// user manages admin users: add, passwd (set a new password), list.
func user(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "passwd" && args[0] != "list") {
		fmt.Fprintln(e.stderr, "usage: cleanads user add|passwd --email EMAIL [--password-file FILE] [--config FILE]\n"+
			"       cleanads user add ... [--role admin|member] [--sites ID,ID]\n"+
			"       cleanads user list [--config FILE]\n"+
			"The password is read from --password-file, else from the first line of standard input.")
		return errUsage
	}
	sub := args[0]
	fs := e.flags("user " + sub)
	cfgPath := fs.String("config", "", "config file (default $CLEANADS_CONFIG)")
	email := fs.String("email", "", "the user's e-mail address")
	pwFile := fs.String("password-file", "", "read the password from this file (default: standard input)")
	role := fs.String("role", "admin", "add: admin (manages people) or member")
	sitesFlag := fs.String("sites", "", "add: the only sites the user may see, by id, comma-separated (default: all)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if sub != "list" && *email == "" {
		fmt.Fprintln(e.stderr, "cleanads user "+sub+": --email is required")
		return errUsage
	}
	_, db, err := e.configAndStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer db.Close()
	// A user may be added before the first serve: bring the schema up first.
	if _, err := db.Migrate(ctx, time.Now); err != nil {
		return err
	}
	users := auth.New(auth.Options{Store: db, Now: time.Now})
	if sub == "list" {
		list, err := db.UserList(ctx)
		if err != nil {
			return err
		}
		for _, u := range list {
			sites := "all sites"
			if !u.AllSites {
				sites = "sites: " + joinIDs(u.Sites)
			}
			fmt.Fprintf(e.stdout, "%s\t%s\t%s\t%s\tsince %s\n", u.ID, u.Email, u.Role, sites, u.CreatedAt.Format("2006-01-02"))
		}
		if len(list) == 0 {
			fmt.Fprintln(e.stdout, "no users")
		}
		return nil
	}
	pw, err := e.readPassword(*pwFile)
	if err != nil {
		return err
	}
	if sub == "passwd" {
		if err := users.SetPassword(ctx, *email, pw); err != nil {
			if errors.Is(err, model.ErrNotFound) {
				return fmt.Errorf("no user %s; add one with cleanads user add", *email)
			}
			return err
		}
		fmt.Fprintf(e.stdout, "password changed for %s; their sessions were ended\n", *email)
		return nil
	}
	access := auth.Access{Role: model.Role(*role), AllSites: *sitesFlag == ""}
	if access.Role != model.RoleAdmin && access.Role != model.RoleMember {
		return fmt.Errorf("--role %s: want admin or member", *role)
	}
	for _, id := range strings.Split(*sitesFlag, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		if _, err := db.SiteByID(ctx, model.SiteID(id)); errors.Is(err, model.ErrNotFound) {
			return fmt.Errorf("--sites: no site %q (see cleanads site list)", id)
		} else if err != nil {
			return err
		}
		access.Sites = append(access.Sites, model.SiteID(id))
	}
	u, err := users.AddUser(ctx, *email, pw)
	if err == nil && (access.Role != model.RoleAdmin || !access.AllSites) {
		err = users.SetAccess(ctx, u.ID, access)
	}
	if errors.Is(err, model.ErrConflict) {
		return fmt.Errorf("user %s exists already; to set a new password run cleanads user passwd --email %s", *email, *email)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "added user %s (%s); log in at /admin/\n", u.Email, u.ID)
	return nil
}

// readPassword reads a password from file, else from the first line of
// standard input.
func (e *env) readPassword(file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if e.stdin == nil {
		return "", errors.New("no password: give --password-file or write it to standard input")
	}
	fmt.Fprint(e.stderr, "Password: ")
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", errors.New("no password: give --password-file or write it to standard input")
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func joinIDs(ids []model.SiteID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ",")
}
