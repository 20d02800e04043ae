// A consumer (like libMIOpen.so) calling one instance function the install
// has and one that a conv library built without the needed instances lacks.
namespace ck { namespace tensor_operation { namespace device { namespace instance {
void add_device_grouped_conv2d_fwd_xdl_nhwgc_gkyxc_nhwgk_f16_instances(int&);
void add_device_grouped_conv3d_bwd_weight_xdl_ndhwgc_gkzyxc_ndhwgk_bf16_instances(int&);
} } } }
int use_ck() {
  int n = 0;
  ck::tensor_operation::device::instance::add_device_grouped_conv2d_fwd_xdl_nhwgc_gkyxc_nhwgk_f16_instances(n);
  ck::tensor_operation::device::instance::add_device_grouped_conv3d_bwd_weight_xdl_ndhwgc_gkzyxc_ndhwgk_bf16_instances(n);
  return n;
}
