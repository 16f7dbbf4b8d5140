"""Who an audit row names: the OS user and host, unless the process was told whom it
acts for (``skconsole serve`` tells each browser session's console)."""

from __future__ import annotations

import getpass
import socket

from skconsole.core.actor import HOST_ENV, USER_ENV, Actor


def test_by_default_the_actor_is_the_os_user_on_this_host() -> None:
    assert Actor.current({}) == Actor(getpass.getuser(), socket.gethostname())


def test_the_environment_names_who_acts_and_from_where() -> None:
    env = {USER_ENV: "alice", HOST_ENV: "browser via ops-1"}

    assert Actor.current(env) == Actor("alice", "browser via ops-1")


def test_blank_variables_leave_the_os_user_and_host() -> None:
    env = {USER_ENV: " ", HOST_ENV: ""}

    assert Actor.current(env) == Actor.current({})
