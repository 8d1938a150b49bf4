/*
 * config_finish.c -- config_finish: what is still unset once the file
 * and the flags are read.  First the selected peer's defaults
 * (compat_finish), then the environment ($POD_NAME, $POD_NAMESPACE,
 * $POD_IP, the service account's namespace file), then what follows
 * from other keys (the request timeout, the cooldowns, a shard group's
 * member Lease).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/cfgfile.h"
#include "config/compat.h"
#include "config/config.h"
#include "config/config_int.h"

#define SA_DIR		"/var/run/secrets/kubernetes.io/serviceaccount"

/* Read the file path (sa_dir/namespace) into buf, trimmed. */
static int
read_namespace(const char *path, char *buf, size_t len)
{
	size_t	 n, i;
	ssize_t	 r;
	int	 fd;

	/* Non-blocking open: a FIFO or a device is refused, not waited on. */
	if ((fd = cfgfile_open(path, CFGFILE_MAX, NULL, NULL, 0)) == -1)
		return -1;
	n = 0;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) != 0) {
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	for (i = 0; i < n && (buf[i] == ' ' || buf[i] == '\t' ||
	    buf[i] == '\n' || buf[i] == '\r'); i++)
		;
	memmove(buf, buf + i, n - i + 1);
	n -= i;
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' ||
	    buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return n > 0 ? 0 : -1;
}

void
config_finish(struct config *c, const char *sa_dir)
{
	struct config_origin	*o;
	const char		*v;
	char			 path[CONFIG_PATH_MAX], buf[CONFIG_STR_MAX];
	uint64_t		 t;

	compat_finish(c);

	if (!c->set[CONFIG_IDENTITY]) {
		o = &c->origin[CONFIG_IDENTITY];
		if ((v = getenv("POD_NAME")) != NULL && *v != '\0') {
			snprintf(c->identity, sizeof(c->identity), "%s", v);
			config_origin_set(o, "$POD_NAME", 0, 0);
		} else {
			if (gethostname(c->identity, sizeof(c->identity)) ==
			    -1)
				c->identity[0] = '\0';
			c->identity[sizeof(c->identity) - 1] = '\0';
			config_origin_set(o, "", 0, 0);
		}
	}
	if (!c->set[CONFIG_LABEL_POD] &&
	    (v = getenv("POD_NAME")) != NULL && *v != '\0') {
		snprintf(c->label_pod, sizeof(c->label_pod), "%s", v);
		config_origin_set(&c->origin[CONFIG_LABEL_POD], "$POD_NAME", 0,
		    0);
	}
	if (!c->set[CONFIG_LABEL_NAMESPACE] &&
	    (v = getenv("POD_NAMESPACE")) != NULL && *v != '\0') {
		snprintf(c->label_namespace, sizeof(c->label_namespace), "%s",
		    v);
		config_origin_set(&c->origin[CONFIG_LABEL_NAMESPACE],
		    "$POD_NAMESPACE", 0, 0);
	}
	if (!c->set[CONFIG_EP_IP] &&
	    (v = getenv("POD_IP")) != NULL && *v != '\0') {
		snprintf(c->ep_ip, sizeof(c->ep_ip), "%s", v);
		config_origin_set(&c->origin[CONFIG_EP_IP], "$POD_IP", 0, 0);
	}
	if (!c->set[CONFIG_REQUEST_TIMEOUT]) {
		/* client-go's NewFromKubeconfig: max(1s, renewDeadline/2). */
		t = c->renew_deadline_ms / 2;
		if (t < 1000)
			t = 1000;
		if (t >= c->renew_deadline_ms)
			t = c->renew_deadline_ms / 2;
		if (t > 0)
			c->request_timeout_ms = t;
	}
	/*
	 * A shard group's first election is its member Lease: lock.name is
	 * GROUP-member-IDENTITY (check_shards refuses a lock.name given).
	 */
	if (config_shards_on(c) && !c->set[CONFIG_LOCK_NAME] &&
	    c->shards_group[0] != '\0') {
		/* Too long is refused by check_shards: cut, never used. */
		snprintf(c->lock_name, sizeof(c->lock_name), "%.63s-member-%.*s",
		    c->shards_group, (int)(sizeof(c->lock_name) - 9 -
		    strnlen(c->shards_group, 63)), c->identity);
		c->origin[CONFIG_LOCK_NAME] = c->origin[CONFIG_SHARDS_GROUP];
	}
	/* After POST /leader/release, one lease_duration by default. */
	if (!c->set[CONFIG_STEP_DOWN_COOLDOWN])
		c->step_down_cooldown_ms = c->lease_duration_ms;
	/* After a release for ill health or no client, the same. */
	if (!c->set[CONFIG_CANDIDACY_COOLDOWN])
		c->candidacy_cooldown_ms = c->lease_duration_ms;
	if (!c->set[CONFIG_LOCK_NAMESPACE]) {
		o = &c->origin[CONFIG_LOCK_NAMESPACE];
		snprintf(path, sizeof(path), "%s/namespace",
		    sa_dir != NULL ? sa_dir : SA_DIR);
		if ((v = getenv("POD_NAMESPACE")) != NULL && *v != '\0') {
			snprintf(c->lock_namespace, sizeof(c->lock_namespace),
			    "%s", v);
			config_origin_set(o, "$POD_NAMESPACE", 0, 0);
		} else if (read_namespace(path, buf, sizeof(buf)) == 0) {
			snprintf(c->lock_namespace, sizeof(c->lock_namespace),
			    "%s", buf);
			config_origin_set(o, path, 0, 0);
		} else {
			snprintf(c->lock_namespace, sizeof(c->lock_namespace),
			    "default");
			config_origin_set(o, "", 0, 0);
		}
	}
}
