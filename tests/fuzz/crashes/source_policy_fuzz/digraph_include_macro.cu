#define P "/etc/passwd"
% : include P
