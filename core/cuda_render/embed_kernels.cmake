# Embeds the kernel templates (core/cuda_render/kernels/*.cuh) in a C++ source as one string for NVRTC.
#   cmake -DOUT=<file.cpp> -DINPUTS=<a.cuh;b.cuh;...> -P embed_kernels.cmake
# The order of INPUTS is the order in the module (later templates use earlier ones).
set(text "")
foreach(input IN LISTS INPUTS)
  file(READ "${input}" body)
  get_filename_component(name "${input}" NAME)
  string(APPEND text "// ---- core/cuda_render/kernels/${name}\n${body}\n")
endforeach()
string(FIND "${text}" ")cas_cuh\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "a kernel template contains the raw-string delimiter )cas_cuh\"")
endif()
file(WRITE "${OUT}.new"
  "// Generated from core/cuda_render/kernels/*.cuh by core/cuda_render/embed_kernels.cmake: do not edit.\n"
  "#include <string_view>\n"
  "namespace cas::gpu {\n"
  "extern const std::string_view kKernelTemplates;\n"
  "const std::string_view kKernelTemplates = R\"cas_cuh(${text})cas_cuh\";\n"
  "}  // namespace cas::gpu\n")
file(COPY_FILE "${OUT}.new" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.new")
