# A config that recurses forever: cmake stops at its recursion limit
# ("Maximum recursion depth of 1000 exceeded"), and so does rocmdoctor (RD1306).
function(ck_check_component c)
  ck_check_component(${c})
endfunction()
ck_check_component(utility)
