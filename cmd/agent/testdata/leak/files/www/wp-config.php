<?php
define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'wp' );
define( 'DB_PASSWORD', 'WpDbPw-8847gg{{.N}}' );
define( 'DB_HOST', 'localhost' );
define('AUTH_KEY', 'wpAuthKey-k3y!9x{{.N}}');
$table_prefix = 'wp_';
