"""The conformance kit's pytest face (:mod:`tests.conformance.kit`; the kit itself is
:mod:`mas_agents.game.conformance_kit`) and the built-in games' cases
(:mod:`tests.conformance.builtin_cases`). The cases' asserts are rewritten by pytest like a test
module's, so a failing check shows its values."""

import pytest

pytest.register_assert_rewrite("tests.conformance.builtin_cases")
