"""The conformance kit (:mod:`tests.conformance.kit`) and the built-in games' cases
(:mod:`tests.conformance.builtin_cases`). Their asserts are rewritten by pytest like a test
module's, so a failing check shows its values."""

import pytest

pytest.register_assert_rewrite("tests.conformance.kit", "tests.conformance.builtin_cases",
                                "tests.conformance.fake")
