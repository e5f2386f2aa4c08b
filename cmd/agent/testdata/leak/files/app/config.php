<?php
$db_host = "localhost";
$db_pass = "PhpVar-6630ll{{.N}}";
