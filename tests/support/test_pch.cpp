// The unit that builds the tests' precompiled header (support/test_pch.hpp).
