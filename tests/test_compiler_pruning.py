"""pruning: a class's source cut down to what one set of construction-time settings runs."""
import textwrap

from tfstudio.compiler.pruning import drop_argument_checks, prune

TOY = textwrap.dedent('''\
    class Toy:
        def __init__(self, window, kind):
            if window < 0:
                raise ValueError("window must be at least 0")
            self.window, self.kind = window, kind

        def forward(self, x, n):
            # a window wider than n changes nothing
            window = self.window if 0 < self.window < n else 0
            spread = x if self.kind == "a" else -x
            if self.kind != "b" and not window:
                return x
            if window:
                x = x + spread
            return x * 2

        def items(self):
            found = []
            found.append(self.kind)
            if found:
                return found
            return None
    ''')


def test_settings_decide_branches_through_locals_and_conditional_values():
    pruned = prune(TOY, {"window": 0, "kind": "a"})
    forward = pruned.split("def forward")[1].split("def items")[0]
    # window is 0 whatever n is, so the first test holds and the rest is unreachable
    assert forward == "(self, x, n):\n        return x\n\n    "
    assert "raise ValueError" not in pruned  # an exported model is built with checked arguments


def test_undecided_settings_and_mutable_locals_keep_their_code():
    pruned = prune(TOY, {"kind": "a"})  # the window differs between instances
    assert "        window = self.window if 0 < self.window < n else 0\n" in pruned
    assert "        spread = x\n" in pruned          # kind == "a" folds the conditional value
    assert "        if not window:\n" not in pruned  # `and` of True and unknown stays a test
    assert "        if self.kind != \"b\" and not window:\n" in pruned
    items = pruned.split("def items")[1]
    assert "if found:" in items and "return None" in items  # a list is filled after binding


def test_a_window_past_the_length_is_a_comparison_chain_not_a_constant():
    pruned = prune(TOY, {"window": 4, "kind": "b"})
    assert "0 < self.window < n" in pruned  # 0 < 4 is known, 4 < n is not
    assert "        spread = -x\n" in pruned
    assert "        return x\n" not in pruned  # kind "b": the early return is gone


def test_a_function_of_nothing_but_checks_keeps_them():
    text = 'def _check(n):\n    if n < 0:\n        raise ValueError("n < 0")\n'
    assert drop_argument_checks(text) == text
