"""The S1 checker's judgement (harness.overlapping, LeadershipChecker and
ShardChecker violations) on hand-made samples: what it must prove, and
what a held-up sample must not make it invent."""

import harness
import shardkit


class Fixed(harness.LeadershipChecker):
    def __init__(self, samples):
        super().__init__([], 0.02)
        self.samples = samples


def s(t0, t1, name, lead):
    return (t0, t1, name, lead, None)


def test_one_stale_sample_inside_another_term_is_caught():
    chk = Fixed([s(0.00, 0.01, "a", True), s(0.02, 0.03, "b", False),
                 s(1.00, 1.01, "a", True), s(1.02, 1.03, "b", True),
                 s(2.00, 2.01, "a", True), s(2.02, 2.03, "b", False)])
    bad = chk.violations()
    assert len(bad) == 1 and {bad[0][0][0], bad[0][1][0]} == {"a", "b"}


def test_back_to_back_terms_are_no_overlap():
    chk = Fixed([s(0.00, 0.01, "a", True), s(0.02, 0.03, "b", False),
                 s(1.00, 1.01, "a", False), s(1.02, 1.03, "b", True),
                 s(2.00, 2.01, "a", False), s(2.02, 2.03, "b", True)])
    assert chk.violations() == []


def test_a_held_up_sample_invents_no_overlap():
    # a's last true answer was read 4.5 s after it was asked for: the
    # daemon answered at some moment of that window, maybe at its start.
    chk = Fixed([s(0.00, 0.01, "a", True), s(0.02, 0.03, "b", False),
                 s(1.00, 5.50, "a", True), s(5.51, 5.52, "b", True),
                 s(5.53, 5.54, "a", False), s(5.55, 5.56, "b", True)])
    assert chk.claims()[0][2] == 5.50      # the widest bound, as before
    assert chk.violations() == []


def test_shard_owners_overlap_per_shard():
    chk = shardkit.ShardChecker.__new__(shardkit.ShardChecker)
    chk.samples = [(0.0, 0.01, "a", {0, 1}), (0.02, 0.03, "b", {2}),
                   (1.0, 1.01, "a", {0, 1}), (1.02, 1.03, "b", {1, 2}),
                   (2.0, 2.01, "a", {0, 1}), (2.02, 2.03, "b", {2})]
    chk._lock = harness.threading.Lock()
    bad = chk.violations()
    assert [(x[0][0], x[0][1], x[1][1]) for x in bad] == [(1, "a", "b")]
