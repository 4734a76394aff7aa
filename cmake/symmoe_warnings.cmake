# Warnings for host code and for the host side of CUDA translation units.
add_library(symmoe_warnings INTERFACE)
target_compile_options(symmoe_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
  # GCC 12 reports false -Wrestrict positives inside libstdc++ string code.
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr>)
